// The supplementary groups of control-socket peers, looked up in the group database and kept
// for a minute, so a client that connects in a loop does not make the agent read /etc/group
// each time. Bounded: at most `capacity` users are remembered.
import FencepostLinux

/// A small cache of `getgrouplist` answers by uid.
struct PeerGroups {
    let capacity: Int
    let lifetime: UInt64
    private var entries: [UInt32: (groups: [UInt32]?, fetched: UInt64)] = [:]

    init(capacity: Int = 32, lifetime: UInt64 = 60_000_000_000) { self.capacity = capacity; self.lifetime = lifetime }

    /// The groups of `uid`, nil when they cannot be read (the peer is then refused).
    /// - Complexity: O(1) when cached; a group database lookup otherwise.
    mutating func groups(of uid: UInt32, now: UInt64) -> [UInt32]? {
        if let e = entries[uid], now &- e.fetched < lifetime { return e.groups }
        if entries.count >= capacity { entries.removeAll() }
        let groups = try? SystemUsers.groupIDs(ofUser: uid)
        entries[uid] = (groups, now)
        return groups
    }
}
