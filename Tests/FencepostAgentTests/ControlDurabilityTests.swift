import Foundation
import Testing
@testable import FencepostAgent
import FencepostLinux

/// A control reply says "done": it waits for the state file's sync that covers it (the
/// fsyncs run on a thread of their own). A real Unix socket, a real epoll loop and the daemon's
/// `ControlConnections`; the sync generations are the test's.
@Suite struct ControlDurabilityTests {
    final class Harness {
        let folder: URL
        let loop: EventLoop<DaemonToken>
        let clients: ControlConnections
        let client: UnixClient
        let id: UInt32
        var answered: [String] = []

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-durability-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("control.sock").path
            loop = try EventLoop(capacity: 8)
            let listener = try UnixListener(path: path, mode: 0o600)
            clients = ControlConnections(listener: listener, loop: loop, policy: ControlPolicy(ownerUserID: getuid()),
                                         maximumMessageBytes: 4096, log: DaemonLog(level: .error) { _, _ in })
            client = try UnixClient.connect(path)
            clients.acceptAll(now: 1)
            guard let first = clients.connections.keys.first else { throw UnixSocketError(path: path, reason: .timedOut) }
            id = first
        }
        deinit { try? FileManager.default.removeItem(at: folder) }

        /// Sends `line` and lets the connection answer it ("re:" + the line), with `durability`.
        func ask(_ line: String, _ durability: ControlConnections.Durability) throws {
            try client.sendLine(line)
            clients.handle(id, now: 2, answer: { .now(Array("re:".utf8) + $0 + [10]) }, durability: { durability })
        }

        /// The next line the client receives, or nil when none comes within 150 ms.
        func received() throws -> String? {
            do { return try client.readLine(timeout: .milliseconds(150)) } catch where error.reason == .timedOut { return nil }
        }
    }

    @Test func aReplyWaitsForItsSyncAndKeepsItsOrder() throws {
        let h = try Harness()
        try h.ask("a", .after(5))
        #expect(try h.received() == nil, "a reply was sent before its state was durable")
        h.clients.synced(through: 4, now: 3)
        #expect(try h.received() == nil, "a reply was sent after an older sync")
        h.clients.synced(through: 5, now: 3)
        #expect(try h.received() == "re:a")

        // Two replies: the second waits for a later sync; the first is not sent ahead of it out of order.
        try h.ask("b", .after(6))
        try h.ask("c", .after(7))
        h.clients.synced(through: 6, now: 4)
        h.clients.synced(through: 7, now: 4)
        #expect(try h.received() == "re:b")
        #expect(try h.received() == "re:c")

        // Already durable (a sync that completed earlier covers it): sent at once.
        try h.ask("d", .after(7))
        #expect(try h.received() == "re:d")
        try h.ask("e", .now)
        #expect(try h.received() == "re:e")
    }

    @Test func aFailedSyncSendsTheRefusalInsteadThenTheEnd() throws {
        let h = try Harness()
        try h.ask("a", .after(1))
        h.clients.syncFailed(refusal: Array("refused\n".utf8), now: 3)
        #expect(try h.received() == "refused", "the waiting reply was sent, or no refusal")
        #expect(throws: UnixSocketError.self) { _ = try h.client.readLine(timeout: .seconds(2)) }
        #expect(h.clients.count == 0)

        // A failure found at once (no sync thread): the same.
        let g = try Harness()
        try g.ask("x", .failed(Array("not done\n".utf8)))
        #expect(try g.received() == "not done")
        #expect(g.clients.count == 0)
    }

    /// A client that closes its side after asking still gets nothing early and the connection
    /// is closed only once its reply went out.
    @Test func aHalfClosedClientIsAnsweredAfterTheSync() throws {
        let h = try Harness()
        try h.client.sendLine("a")
        _ = shutdown(h.client.descriptor.rawValue, Int32(SHUT_WR))
        h.clients.handle(h.id, now: 2, answer: { .now(Array("re:".utf8) + $0 + [10]) }, durability: { .after(3) })
        #expect(h.clients.count == 1, "closed with its reply still waiting")
        h.clients.synced(through: 3, now: 3)
        #expect(try h.received() == "re:a")
        #expect(h.clients.count == 0)
    }

    /// A line answered later (the socket's `apply`, in parts) leaves its connection owing the
    /// answer: the lines after it wait, unanswered, even a half-closed client is not closed; the
    /// owed answer comes first, after its sync, then the lines after it, in order.
    @Test func anOwedAnswerComesBeforeTheLinesAfterIt() throws {
        let h = try Harness()
        try h.client.sendLine("a\nlater\nb\nc")
        _ = shutdown(h.client.descriptor.rawValue, Int32(SHUT_WR))
        let answer = { (line: [UInt8]) -> ControlConnections.Answer in
            String(decoding: line, as: UTF8.self) == "later" ? .later : .now(Array("re:".utf8) + line + [10])
        }
        h.clients.handle(h.id, now: 2, answer: answer, durability: { .now })
        #expect(try h.received() == "re:a")
        #expect(try h.received() == nil, "a line after the owed answer was answered before it")
        h.clients.handle(h.id, now: 3, answer: answer, durability: { .now })
        #expect(try h.received() == nil, "a line after the owed answer was answered before it")
        #expect(h.clients.count == 1, "closed while it owed an answer")
        #expect(h.clients.settle(h.id, answer: Array("applied\n".utf8), now: 4, durability: { .after(5) }))
        #expect(try h.received() == nil, "the owed answer was sent before its sync")
        h.clients.synced(through: 5, now: 5)
        #expect(try h.received() == "applied")
        #expect(!h.clients.settle(h.id, answer: Array("twice\n".utf8), now: 5, durability: { .now }), "settled twice")
        h.clients.handle(h.id, now: 6, answer: answer, durability: { .now })
        #expect(try h.received() == "re:b")
        #expect(try h.received() == "re:c")
        #expect(h.clients.count == 0, "not closed once answered after its end of input")
    }
}
