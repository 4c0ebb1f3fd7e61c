// What woke the daemon's epoll loop.
import FencepostLinux

/// The daemon's epoll tokens: one per kind of descriptor, connections by number.
enum DaemonToken: EventToken, Hashable {
    case signals, monotonicTimer, wallTimer, gps, button, listener
    /// The state file's sync thread completed a sync.
    case stateSynced
    /// The thread reading the configuration again (SIGHUP) has its result.
    case configurationRead
    /// The fleet link's MQTT socket, or its connect thread's eventfd.
    case fleet
    /// The thread reading a request list from the fleet has its result.
    case fleetRequestsRead
    /// The thread building the regions' index has it.
    case regionIndexBuilt
    case connection(UInt32)

    var epollData: UInt64 {
        switch self {
        case .signals: 0
        case .monotonicTimer: 1
        case .wallTimer: 2
        case .gps: 3
        case .button: 4
        case .listener: 5
        case .stateSynced: 6
        case .configurationRead: 7
        case .fleet: 8
        case .fleetRequestsRead: 9
        case .regionIndexBuilt: 10
        case .connection(let id): 1 << 32 | UInt64(id)
        }
    }

    init(epollData: UInt64) {
        switch epollData {
        case 0: self = .signals
        case 1: self = .monotonicTimer
        case 2: self = .wallTimer
        case 3: self = .gps
        case 4: self = .button
        case 5: self = .listener
        case 6: self = .stateSynced
        case 7: self = .configurationRead
        case 8: self = .fleet
        case 9: self = .fleetRequestsRead
        case 10: self = .regionIndexBuilt
        default:
            precondition(epollData >> 32 == 1, "unknown epoll token \(epollData)")
            self = .connection(UInt32(truncatingIfNeeded: epollData))
        }
    }
}
