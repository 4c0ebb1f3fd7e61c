/// When EPOLLOUT may be armed before the CONNACK (libmosquitto 2.0.11 in an external loop).
///
/// During the TLS handshake the library reports `want_write` while it waits for the server
/// (upstream #3745), and its `loop_write` does nothing until the handshake is done (only
/// `loop_read` drives it): a level-triggered EPOLLOUT would wake the loop without end at 100 % CPU.
/// So before the CONNACK a writable wake is allowed once, then again only after a readable wake
/// (the server answered): writes follow reads one for one, and the 1 s tick drives whatever is left.
/// After the CONNACK, EPOLLOUT follows `want_write` (the socket really has data queued).
public struct HandshakeWriteGate: Hashable, Sendable {
    private var wroteSinceRead = false

    public init() {}

    /// Whether EPOLLOUT may be armed now, given the library's `want_write` and whether the CONNACK came.
    public func allowsWritable(wantWrite: Bool, connected: Bool) -> Bool {
        wantWrite && (connected || !wroteSinceRead)
    }

    /// A writable wake was handled.
    public mutating func wrote() { wroteSinceRead = true }
    /// A readable wake was handled.
    public mutating func read() { wroteSinceRead = false }
    /// A new socket: its first writable wake (the TCP connect done) is needed.
    public mutating func reset() { wroteSinceRead = false }
}
