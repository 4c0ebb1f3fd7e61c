// The control socket's connections (design §6), kept apart from the daemon the way swift-nio
// keeps each concern in its own handler: accepting, the peer check, line framing, reading,
// buffered writing and closing. What a line means is not its business: the daemon passes a
// closure that answers one line.
import FencepostLinux

/// The listening control socket and its open connections, registered with the daemon's loop.
final class ControlConnections {
    /// One accepted connection.
    struct Connection {
        var socket: UnixConnection
        var framer: LineFramer
        /// Refused or sent an over-long line: no more input is read; closed once the output is written.
        var closeAfterFlush = false
    }

    /// The listening socket (registered by the daemon for `.readable` with token `.listener`).
    let listener: UnixListener
    let loop: EventLoop<DaemonToken>
    /// Who may connect.
    let policy: ControlPolicy
    /// The longest line a client may send.
    let maximumMessageBytes: Int
    let log: DaemonLog
    private(set) var connections: [UInt32: Connection] = [:]
    private var nextConnectionID: UInt32 = 0
    /// One read buffer for every connection (the loop has one thread).
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(listener: UnixListener, loop: EventLoop<DaemonToken>, policy: ControlPolicy, maximumMessageBytes: Int, log: DaemonLog) {
        self.listener = listener; self.loop = loop; self.policy = policy
        self.maximumMessageBytes = maximumMessageBytes; self.log = log
    }

    /// Open connections.
    var count: Int { connections.count }

    /// Accepts every waiting connection; a refused peer gets its error line and is closed.
    func acceptAll() {
        while true {
            let c: UnixConnection?
            do { c = try listener.accept() } catch { log.warning("accept: \(error)"); return }
            guard let c else { return }
            let id = nextConnectionID
            nextConnectionID &+= 1
            var connection = Connection(socket: c, framer: LineFramer(maximumLineLength: maximumMessageBytes))
            if let peer = try? c.peerCredentials(), let refusal = policy.refusal(peer) {
                log.warning("control: refused uid \(peer.userID) (pid \(peer.processID))")
                c.enqueue(refusal)
                connection.closeAfterFlush = true
            }
            do { try loop.register(c.descriptor, for: [.readable, .hangup], token: .connection(id)) } catch { continue }
            connections[id] = connection
            flush(id)
        }
    }

    /// Reads what connection `id` sent, answers each complete line with `answer` (nil: no
    /// answer, a JSON-RPC notification), calls `beforeReply` once, then writes the answers.
    func handle(_ id: UInt32, hangup: Bool, answer: ([UInt8]) -> [UInt8]?, beforeReply: () -> Void) {
        guard var connection = connections[id] else { return }
        var closed = false
        reading: while !connection.closeAfterFlush {
            let r: SocketRead
            do { r = try buffer.withUnsafeMutableBytes { b throws(Errno) in try connection.socket.read(into: b) } } catch {
                closed = true
                break reading
            }
            switch r {
            case .bytes(let n): connection.framer.append(buffer[..<n])
            case .wouldBlock: break reading
            case .closed: closed = true; break reading
            }
        }
        while !connection.closeAfterFlush, let framed = connection.framer.next() {
            switch framed {
            case .line(let line):
                if let l = answer(line) { connection.socket.enqueue(l) }
            case .tooLong:
                connection.socket.enqueue(ControlService.tooLong(limit: maximumMessageBytes))
                connection.closeAfterFlush = true
            }
        }
        connections[id] = connection
        // A reply says "done": what it reports must survive a power cut first.
        beforeReply()
        if closed && !connection.socket.hasPendingOutput { close(id); return }
        flush(id)
        if closed { close(id) }
    }

    func flush(_ id: UInt32) {
        guard let connection = connections[id] else { return }
        let done = (try? connection.socket.flush()) ?? true
        if done && connection.closeAfterFlush { close(id) }
    }

    func close(_ id: UInt32) {
        guard let c = connections.removeValue(forKey: id) else { return }
        try? loop.unregister(c.socket.descriptor)
    }

    /// Closes every connection (the listener closes with this object).
    func closeAll() {
        for id in Array(connections.keys) { close(id) }
    }
}
