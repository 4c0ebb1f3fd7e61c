import CivilTime
import FencepostLinux
import Glibc
import Testing

/// The shape of the daemon's `run`: every source of the shell in one epoll loop, dispatched on a
/// caller-chosen token enum. A pty plays the GPS, a UnixClient the CLI, a timer the next trigger,
/// and a signal ends the loop.
@Suite("loop composition")
struct LoopCompositionTests {
    enum Source: EventToken, Hashable {
        case signals, interval, calendar, serial, listener, connection(UInt32)
        var epollData: UInt64 {
            switch self {
            case .signals: 0
            case .interval: 1
            case .calendar: 2
            case .serial: 3
            case .listener: 4
            case .connection(let id): 1 << 32 | UInt64(id)
            }
        }
        init(epollData: UInt64) {
            switch epollData {
            case 0: self = .signals
            case 1: self = .interval
            case 2: self = .calendar
            case 3: self = .serial
            case 4: self = .listener
            default:
                precondition(epollData >> 32 == 1, "unknown token \(epollData)")
                self = .connection(UInt32(truncatingIfNeeded: epollData))
            }
        }
    }

    @Test("serial bytes, a control request, an interval timer, a past calendar deadline and a signal, in one loop")
    func oneLoop() throws {
        let signals = try SignalReceiver(additional: [SIGUSR2])
        let loop = try EventLoop<Source>(capacity: 8)
        let interval = try MonotonicTimer()
        let calendar = try WallClockTimer()
        let pty = try PseudoTerminal()
        let serial = try SerialPort(path: pty.devicePath, baudRate: 9600)
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let listener = try UnixListener(path: dir + "/control.sock", mode: 0o600)
        try loop.register(signals.descriptor, for: .readable, token: .signals)
        try loop.register(interval.descriptor, for: .readable, token: .interval)
        try loop.register(calendar.descriptor, for: .readable, token: .calendar)
        try loop.register(serial.descriptor, for: .readable, token: .serial)
        try loop.register(listener.descriptor, for: .readable, token: .listener)

        try interval.arm(at: MonotonicInstant(nanosecondsSinceBoot: SystemClocks.boottimeNow().nanosecondsSinceBoot + 20_000_000))
        try calendar.arm(at: SystemClocks.wallNow().adding(seconds: -1))
        let sentence = Array("$GPZDA,201530.00,04,07,2002,00,00*60\r\n".utf8)
        try sentence.withUnsafeBytes { try pty.master.writeAll($0) }
        let client = try UnixClient.connect(dir + "/control.sock")
        try client.sendLine("{\"method\":\"status\"}")

        var connections: [UInt32: UnixConnection] = [:]
        var framers: [UInt32: LineFramer] = [:]
        var nextID: UInt32 = 0
        var serialBytes: [UInt8] = []
        var seen: Set<String> = []
        var buffer = [UInt8](repeating: 0, count: 512)
        var stop = false
        var rounds = 0
        while !stop {
            rounds += 1
            try #require(rounds < 100, "loop did not finish; seen \(seen.sorted())")
            let events = try loop.wait(timeout: .seconds(10))
            try #require(!events.isEmpty, "nothing happened within 10 s; seen \(seen.sorted())")
            for event in events {
                switch event.token {
                case .signals:
                    while let s = try signals.receive() {
                        #expect(s.number == SIGUSR2)
                        seen.insert("signal")
                        stop = true
                    }
                case .interval:
                    #expect(try interval.readExpirations() == 1)
                    seen.insert("interval")
                case .calendar:
                    #expect(try calendar.read() == .expired(1))
                    seen.insert("calendar")
                case .serial:
                    while case .bytes(let n) = try buffer.withUnsafeMutableBytes({ try serial.read(into: $0, hangupReported: event.isHangup) }) {
                        serialBytes += buffer[..<n]
                    }
                    if serialBytes == sentence { seen.insert("serial") }
                case .listener:
                    while let c = try listener.accept() {
                        #expect(try c.peerCredentials().processID == getpid())
                        connections[nextID] = c
                        framers[nextID] = LineFramer(maximumLineLength: 1024)
                        try loop.register(c.descriptor, for: .readable, token: .connection(nextID))
                        nextID += 1
                    }
                case .connection(let id):
                    let c = try #require(connections[id])
                    reading: while true {
                        switch try buffer.withUnsafeMutableBytes({ try c.read(into: $0) }) {
                        case .bytes(let n): framers[id]!.append(buffer[..<n])
                        case .wouldBlock: break reading
                        case .closed:
                            try loop.unregister(c.descriptor)
                            connections[id] = nil
                            break reading
                        }
                    }
                    while case .line(let line)? = framers[id]!.next() {
                        #expect(String(decoding: line, as: UTF8.self) == "{\"method\":\"status\"}")
                        c.enqueue(Array("{\"result\":\"ok\"}\n".utf8))
                        #expect(try c.flush())
                        seen.insert("request")
                    }
                }
            }
            // Everything else seen: ask the loop to stop the way systemd would, with a signal.
            if seen == ["interval", "calendar", "serial", "request"] {
                #expect(pthread_kill(pthread_self(), SIGUSR2) == 0)
            }
        }
        #expect(seen == ["interval", "calendar", "serial", "request", "signal"])
        #expect(try client.readLine(timeout: .seconds(10)) == "{\"result\":\"ok\"}")
    }
}
