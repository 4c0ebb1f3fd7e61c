import FencepostJSON
import FencepostLinux
import Fleet
import Foundation
import Testing

/// The outbox in a real state file: seq order, bounds, drop by priority with a gap event, rows
/// handed to the library never dropped, restart keeps rows and seqs, a seq never reused.
struct OutboxStoreTests {
    func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-outbox-\(UUID().uuidString.prefix(8)).db").path
    }

    func entry(_ kind: String, _ priority: Int, _ n: Int, pad: Int = 0) -> OutboxEntry {
        OutboxEntry(kind: kind, topic: "fencepost/v1/dev/t/evt", priority: priority,
                    body: #""type":"\#(kind)","n":\#(n)"# + (pad > 0 ? #","pad":"\#(String(repeating: "x", count: pad))""# : ""), created: 1000 + Int64(n))
    }

    @Test("rows come back in seq order after a restart; acknowledged rows go; a seq is never handed out again")
    func restartAndAck() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try NotificationStore(path: path)
            try store.apply((0..<5).map { .appendOutbox(entry("delivery", 1, $0)) })
            try store.close()
        }
        let store = try NotificationStore(path: path)
        let rows = try store.outboxRows(after: 0, limit: 10)
        #expect(rows.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(rows.map(\.body).allSatisfy { $0.hasPrefix(#""type":"delivery""#) })
        try store.deleteOutbox(rows.suffix(2).map { ($0.seq, $0.bytes) })
        try store.apply([.appendOutbox(entry("response", 0, 9))])
        #expect(try store.outboxRows(after: 0, limit: 10).map(\.seq) == [1, 2, 3, 6])
        #expect(try store.outboxStatistics().rows == 4)
        try store.markOutboxFailed(seq: 1, reason: "0x87 not authorized")
        #expect(try store.outboxRows(after: 0, limit: 10).map(\.seq) == [2, 3, 6])
        #expect(try store.outboxStatistics().failed == 1)
    }

    @Test("full: transitions dropped first, oldest first, down to 90 %, announced by one gap event; handed rows kept")
    func boundsAndGap() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try NotificationStore(path: path)
        store.outboxBounds = FleetOutboxBounds(maximumRows: 100, maximumBytes: 1 << 20, window: 8)
        // 40 deliveries and 60 transitions, interleaved; the first 10 rows handed to the library.
        var changes: [StoreChange] = []
        for i in 0..<100 { changes.append(.appendOutbox(i % 5 < 2 ? entry("delivery", 1, i) : entry("transition", 2, i))) }
        try store.apply(changes)
        store.outboxProtectedThrough = 10
        try store.apply([.appendOutbox(entry("delivery", 1, 100))])
        let rows = try store.outboxRows(after: 0, limit: 1000)
        let stats = try store.outboxStatistics()
        #expect(stats.rows <= 100, "rows \(stats.rows)")
        #expect(rows.count == stats.rows)
        // Every handed row is still there, every delivery too; the dropped are transitions.
        #expect(rows.filter { $0.seq <= 10 }.count == 10)
        #expect(rows.filter { $0.kind == "delivery" }.count == 41)
        let gaps = rows.filter { $0.kind == "gap" }
        #expect(gaps.count == 1)
        let gap = try JSONValue.parse(FleetEvent.payload(id: "i", seq: gaps[0].seq, body: gaps[0].body))
        let dropped = try #require(gap["dropped"]?["transition"]?.int64)
        #expect(dropped == Int64(100 - rows.count + 2))   // 100 + the delivery + the gap − what is left
        let from = try #require(gap["from"]?.int64), to = try #require(gap["to"]?.int64)
        #expect(from > 10 && to < gaps[0].seq)
        // The rows 90 % low water: the next insert does not drop again.
        let before = rows.count
        try store.apply([.appendOutbox(entry("transition", 2, 101))])
        #expect(try store.outboxStatistics().rows == before + 1)
    }

    @Test("full of responses: a transition is refused and counted in the gap, whose row absorbs later refusals")
    func refusedAndMerged() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try NotificationStore(path: path)
        store.outboxBounds = FleetOutboxBounds(maximumRows: 20, maximumBytes: 1 << 20, window: 4)
        try store.apply((0..<20).map { .appendOutbox(entry("response", 0, $0)) })
        for i in 0..<5 { try store.apply([.appendOutbox(entry("transition", 2, 100 + i))]) }
        let rows = try store.outboxRows(after: 0, limit: 100)
        #expect(rows.filter { $0.kind == "response" }.count == 20)
        #expect(rows.filter { $0.kind == "transition" }.isEmpty)
        let gaps = rows.filter { $0.kind == "gap" }
        #expect(gaps.count == 1, "\(gaps.map(\.body))")
        if let g = gaps.first {
            let v = try JSONValue.parse(Array(("{" + g.body + "}").utf8))
            #expect(v["refused"]?["transition"]?.int64 == 5)
        }
    }

    @Test("link down: every drop goes into the one unsent gap row, across a restart; a handed gap row is not touched")
    func dropsWhileDownShareOneGapRow() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bounds = FleetOutboxBounds(maximumRows: 16, maximumBytes: 1 << 20, window: 4)
        func check(_ store: NotificationStore, added: Int, gapRows: Int) throws {
            let rows = try store.outboxRows(after: 0, limit: 100)
            let gaps = rows.filter { $0.kind == "gap" }
            let kept = rows.filter { $0.kind == "delivery" }.count
            #expect(rows.count <= 16)
            #expect(gaps.count == gapRows, "\(gaps.map(\.body))")
            #expect(kept >= 16 - gapRows - 2, "\(kept) deliveries kept of \(rows.count) rows")
            let dropped = try gaps.reduce(0) { n, g in
                n + Int(try JSONValue.parse(Array(("{" + g.body + "}").utf8))["dropped"]?["delivery"]?.int64 ?? 0)
            }
            #expect(kept + dropped == added, "\(kept) kept + \(dropped) dropped ≠ \(added)")
        }
        do {
            let store = try NotificationStore(path: path)
            store.outboxBounds = bounds
            for i in 0 ..< 100 { try store.apply([.appendOutbox(entry("delivery", 1, i))]) }
            try check(store, added: 100, gapRows: 1)
            try store.close()
        }
        // A restart (power cycle while still offline): the gap row is found again.
        let store = try NotificationStore(path: path)
        store.outboxBounds = bounds
        for i in 100 ..< 150 { try store.apply([.appendOutbox(entry("delivery", 1, i))]) }
        try check(store, added: 150, gapRows: 1)
        // Once handed to the library the gap row is final: the next drop writes a new one.
        let gapSeq = try #require(try store.outboxRows(after: 0, limit: 100).first { $0.kind == "gap" }?.seq)
        store.outboxProtectedThrough = gapSeq
        for i in 150 ..< 170 { try store.apply([.appendOutbox(entry("delivery", 1, i))]) }
        try check(store, added: 170, gapRows: 2)
    }

    @Test("a rolled-back transaction leaves the counters as they were")
    func rollback() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try NotificationStore(path: path)
        try store.apply([.appendOutbox(entry("delivery", 1, 0))])
        // The second change fails (unknown request): the whole batch, the outbox row included, goes.
        #expect(throws: StoreError.self) {
            try store.apply([.appendOutbox(entry("delivery", 1, 1)), .setRequestState(id: "nope", state: "{}")])
        }
        #expect(try store.outboxStatistics().rows == 1)
        #expect(try store.outboxRows(after: 0, limit: 10).count == 1)
    }
}
