import FencepostLinux
import FencepostTestSupport
import Foundation
import Glibc
import Testing

/// The control channel over real Unix sockets in a private directory.
@Suite("unix socket", .processes)
struct UnixSocketTests {
    /// A listener and a connected client, accepted through the event loop.
    static func accepted(_ listener: UnixListener, _ loop: EventLoop<UInt64>) throws -> UnixConnection {
        while true {
            let events = try loop.wait(timeout: .seconds(10))
            try #require(!events.isEmpty, "no connection within 10 s")
            if let c = try listener.accept() { return c }
        }
    }

    @Test("lines round-trip between UnixClient and a UnixConnection driven by the event loop")
    func roundTrip() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/control.sock"
        let listener = try UnixListener(path: path, mode: 0o660)
        var st = stat()
        #expect(lstat(path, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o660)
        #expect(try listener.accept() == nil)

        let loop = try EventLoop<UInt64>()
        try loop.register(listener.descriptor, for: .readable, token: 0)
        let client = try UnixClient.connect(path)
        let connection = try Self.accepted(listener, loop)
        try loop.register(connection.descriptor, for: [.readable, .hangup], token: 1)

        // Server side: echo each line upper-cased, via the framer and the output buffer.
        var framer = LineFramer(maximumLineLength: 4096)
        var buffer = [UInt8](repeating: 0, count: 7)  // small: lines arrive in several reads
        func serve(until lines: Int) throws {
            var answered = 0
            while answered < lines {
                let events = try loop.wait(timeout: .seconds(10))
                try #require(!events.isEmpty, "server saw nothing within 10 s (answered \(answered) of \(lines), buffered \(framer.bufferedCount))")
                readLoop: while true {
                    switch try buffer.withUnsafeMutableBytes({ try connection.read(into: $0) }) {
                    case .bytes(let n): framer.append(buffer[..<n])
                    case .wouldBlock: break readLoop
                    case .closed: return
                    }
                }
                while case .line(let line)? = framer.next() {
                    connection.enqueue(String(decoding: line, as: UTF8.self).uppercased().utf8)
                    connection.enqueue([0x0A])
                    answered += 1
                }
                #expect(try connection.flush())
                #expect(!connection.hasPendingOutput)
            }
        }
        let requests = ["{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":1}", "", "pending é ✓", String(repeating: "x", count: 3000)]
        for request in requests {
            try client.sendLine(request)
            try serve(until: 1)
            #expect(try client.readLine(timeout: .seconds(10)) == request.uppercased())
        }
        // Two lines in one write come back as two lines.
        try client.sendLine("one\ntwo")
        try serve(until: 2)
        #expect(try client.readLine(timeout: .seconds(10)) == "ONE")
        #expect(try client.readLine(timeout: .seconds(10)) == "TWO")
    }

    @Test("readLine times out when the server says nothing, and reports a closed server")
    func clientTimeoutAndClose() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/c.sock"
        let listener = try UnixListener(path: path, mode: 0o600)
        let loop = try EventLoop<UInt64>()
        try loop.register(listener.descriptor, for: .readable, token: 0)
        let client = try UnixClient.connect(path)
        var connection: UnixConnection? = try Self.accepted(listener, loop)
        let error = #expect(throws: UnixSocketError.self) { try client.readLine(timeout: .milliseconds(50)) }
        #expect(error?.reason == .timedOut)
        connection?.enqueue(Array("partial".utf8))
        #expect(try connection?.flush() == true)
        connection = nil  // closes
        let closed = #expect(throws: UnixSocketError.self) { try client.readLine(timeout: .seconds(10)) }
        #expect(closed?.reason == .closedByPeer)
    }

    @Test("an answer longer than the client's limit is refused")
    func clientLineTooLong() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/l.sock"
        let listener = try UnixListener(path: path, mode: 0o600)
        let loop = try EventLoop<UInt64>()
        try loop.register(listener.descriptor, for: .readable, token: 0)
        let client = try UnixClient.connect(path, maximumLineLength: 10)
        let connection = try Self.accepted(listener, loop)
        connection.enqueue(Array("01234567890\n".utf8))
        #expect(try connection.flush())
        let error = #expect(throws: UnixSocketError.self) { try client.readLine(timeout: .seconds(10)) }
        #expect(error?.reason == .lineTooLong(10))
    }

    @Test("peer credentials are this process's pid, uid and gid")
    func peerCredentials() throws {
        let dir = try TestSockets.makeDirectory(mode: 0o755)
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/cred.sock"
        let listener = try UnixListener(path: path, mode: 0o666)
        let loop = try EventLoop<UInt64>()
        try loop.register(listener.descriptor, for: .readable, token: 0)
        let client = try UnixClient.connect(path)
        let connection = try Self.accepted(listener, loop)
        let creds = try connection.peerCredentials()
        #expect(creds == PeerCredentials(processID: getpid(), userID: getuid(), groupID: getgid()))
        _ = client

        // As root, also from a child that dropped to uid/gid 65534 (nobody/nogroup) with setpriv:
        // the credentials must be the child's, not ours. Without root (or without setpriv and a
        // world-readable python3) there is no other uid to become, so this part is not run.
        let setpriv = "/usr/bin/setpriv", python = "/usr/bin/python3"
        guard getuid() == 0, access(setpriv, X_OK) == 0, access(python, X_OK) == 0 else { return }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: setpriv)
        child.arguments = ["--reuid", "65534", "--regid", "65534", "--clear-groups", python, "-c",
                           "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'hi\\n'); s.recv(1)",
                           path]
        try child.run()
        defer { if child.isRunning { child.terminate() }; child.waitUntilExit() }
        let other = try Self.accepted(listener, loop)
        let otherCreds = try other.peerCredentials()
        #expect(otherCreds == PeerCredentials(processID: child.processIdentifier, userID: 65534, groupID: 65534))
        other.enqueue([0x0A])
        #expect(try other.flush())
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
    }

    @Test("a stale socket file is replaced; a live listener and a non-socket file are left alone")
    func staleSocket() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/s.sock"
        // A stale socket: bound, never listened, closed (what a crash leaves behind).
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(TestSockets.withAddress(path) { bind(stale, $0, $1) } == 0)
        close(stale)
        #expect(access(path, F_OK) == 0)
        var listener: UnixListener? = try UnixListener(path: path, mode: 0o600)
        let c = try TestSockets.connectStream(path)
        close(c)

        // A live listener: a second one on the same path is refused, and the first still works.
        let second = #expect(throws: UnixSocketError.self) { try UnixListener(path: path, mode: 0o600) }
        #expect(second?.reason == .inUse)
        #expect(second?.description == "\(path): another process is listening on this socket")
        let c2 = try TestSockets.connectStream(path)
        close(c2)

        // Released: the socket file goes with it.
        listener = nil
        _ = listener
        #expect(access(path, F_OK) != 0)

        // A regular file is never removed.
        let file = dir + "/not-a-socket"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("keep".utf8)))
        let refused = #expect(throws: UnixSocketError.self) { try UnixListener(path: file, mode: 0o600) }
        #expect(refused?.reason == .notASocket)
        #expect(FileManager.default.contents(atPath: file) == Data("keep".utf8))

        // A path in a missing directory names the path and the call.
        let missing = dir + "/no/such/dir.sock"
        let bindError = #expect(throws: UnixSocketError.self) { try UnixListener(path: missing, mode: 0o600) }
        #expect(bindError?.description == "\(missing): bind: No such file or directory")
        let tooLong = "/tmp/" + String(repeating: "y", count: 120)
        #expect(throws: UnixSocketError(path: tooLong, reason: .invalidPath)) { try UnixListener(path: tooLong, mode: 0o600) }
    }

    @Test("connecting where nobody listens names the path")
    func clientRefused() throws {
        let path = "/tmp/fencepost-nobody-\(getpid()).sock"
        let error = #expect(throws: UnixSocketError.self) { try UnixClient.connect(path) }
        #expect(error?.description == "\(path): connect: No such file or directory")
    }

    @Test("a connection whose peer closed reads as closed and its flush fails with EPIPE, not SIGPIPE")
    func peerGone() throws {
        let dir = try TestSockets.makeDirectory()
        defer { TestSockets.removeDirectory(dir) }
        let path = dir + "/p.sock"
        let listener = try UnixListener(path: path, mode: 0o600)
        let loop = try EventLoop<UInt64>()
        try loop.register(listener.descriptor, for: .readable, token: 0)
        let fd = try TestSockets.connectStream(path)
        let connection = try Self.accepted(listener, loop)
        close(fd)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try buffer.withUnsafeMutableBytes { try connection.read(into: $0) } == .closed)
        connection.enqueue(Array(repeating: 1, count: 100))
        #expect(throws: Errno.brokenPipe) { try connection.flush() }
    }
}
