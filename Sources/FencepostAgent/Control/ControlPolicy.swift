// Who may talk to the agent: checked once per connection with the peer's SO_PEERCRED
// credentials, before any line is read.
import FencepostLinux

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
    /// `SO_PEERCRED` gives only the peer's primary group; `supplementaryGroups` is asked for the
    /// user's other groups (`adduser pi fencepost` adds one) only when the primary group does not
    /// decide. It returns nil when they cannot be read: the peer is then refused (fail closed).
    public func check(_ peer: PeerCredentials, supplementaryGroups: (UInt32) -> [UInt32]? = { _ in [] }) -> String? {
        if peer.userID == 0 || peer.userID == ownerUserID || userIDs.contains(peer.userID) { return nil }
        if groups.contains(where: { $0.id == peer.groupID }) { return nil }
        var unreadable = false
        if !groups.isEmpty {
            if let others = supplementaryGroups(peer.userID) {
                if others.contains(where: { g in groups.contains { $0.id == g } }) { return nil }
            } else {
                unreadable = true
            }
        }
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
            + (unreadable ? " (its supplementary groups could not be read)" : "")
    }

    /// The refusal as a whole JSON-RPC error line (id null), to send before closing.
    public func refusal(_ peer: PeerCredentials, supplementaryGroups: (UInt32) -> [UInt32]? = { _ in [] }) -> [UInt8]? {
        check(peer, supplementaryGroups: supplementaryGroups).map { Self.errorLine($0) }
    }

    /// A refusal line for a peer whose credentials could not be read at all (fail closed).
    public static func unreadableCredentials(_ error: Errno) -> (message: String, line: [UInt8]) {
        let message = "permission denied: the peer's credentials (SO_PEERCRED) cannot be read: \(error)"
        return (message, errorLine(message))
    }

    static func errorLine(_ message: String) -> [UInt8] { RPCReply.error(RPCError(.serverError, message), id: .null) }

    static func or(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
    }
}
