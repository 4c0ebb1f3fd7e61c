// Who may talk to the agent: checked once per connection with the peer's SO_PEERCRED
// credentials, before any line is read.
import FencepostLinux
import FencepostJSON

/// The users and groups allowed on the control socket. Root is always allowed.
public struct ControlPolicy: Sendable {
    /// The daemon's own uid (the socket's owner).
    public var ownerUserID: UInt32
    /// Further allowed users.
    public var userIDs: [UInt32]
    /// Allowed groups, with their names for the message.
    public var groups: [(id: UInt32, name: String)]

    public init(ownerUserID: UInt32, userIDs: [UInt32] = [], groups: [(id: UInt32, name: String)] = []) {
        self.ownerUserID = ownerUserID; self.userIDs = userIDs; self.groups = groups
    }

    /// nil when `peer` may use the socket; else the sentence to send as a JSON-RPC error before
    /// closing: `permission denied: uid 1000 is not root, the owner (uid 0) or in group 998 (fencepost)`.
    ///
    /// The peer's groups are its primary group and its supplementary groups (`adduser pi
    /// fencepost` adds one), both from the kernel (``PeerCredentials``).
    public func check(_ peer: PeerCredentials) -> String? {
        if peer.userID == 0 || peer.userID == ownerUserID || userIDs.contains(peer.userID) { return nil }
        if groups.contains(where: { g in g.id == peer.groupID || peer.groupIDs.contains(g.id) }) { return nil }
        var allowed = ["root", "the owner (uid \(ownerUserID))"]
        allowed += userIDs.map { "uid \($0)" }
        let groupText = groups.map { "group \($0.id) (\($0.name))" }
        let list: String
        if groupText.isEmpty {
            list = Self.or(allowed)
        } else {
            list = allowed.joined(separator: ", ") + " or in " + Self.or(groupText)
        }
        return "permission denied: uid \(peer.userID) is not \(list)"
    }

    /// The refusal as a whole JSON-RPC error line (id null), to send before closing.
    public func refusal(_ peer: PeerCredentials) -> [UInt8]? {
        check(peer).map { Self.errorLine($0) }
    }

    /// A refusal line for a peer whose credentials could not be read at all (fail closed).
    public static func unreadableCredentials(_ error: Errno) -> (message: String, line: [UInt8]) {
        let message = "permission denied: the peer's credentials (SO_PEERCRED, SO_PEERGROUPS) cannot be read: \(error)"
        return (message, errorLine(message))
    }

    static func errorLine(_ message: String) -> [UInt8] { RPCReply.error(RPCError(.serverError, message), id: .null) }

    static func or(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
    }
}
