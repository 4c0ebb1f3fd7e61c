// The fleet outbox in the state file: events written in the transaction that records them, sent
// in seq order, deleted when the broker acknowledges them (Fleet/FleetOutboxPolicy.swift).
//
// Bounds: rows and body bytes, counted in memory (read once with a scan at first use, then kept
// by every insert and delete, and put back when a transaction rolls back). An insert past either
// bound drops rows by priority — 3 (other) first, then 2 (transitions), 1 (deliveries), never
// gaps; oldest first; never a row at or below `outboxProtectedThrough` (handed to the MQTT
// library, which may still deliver it) — down to 90 % of each bound, and announces it with one
// gap event. An event less important than everything left is refused and counted in that gap.
// The newest gap row, while not yet handed to the library, absorbs every later drop and refusal
// instead of adding a row (its `to` may then pass its own seq): a link down for days costs one
// gap row, not one per drop — gaps are never dropped, so a row per drop would fill the outbox
// with gaps. It is found again after a restart (one query at first use).
//
// - Complexity: an insert O(log n); a drop O(k log n) for k rows dropped, through the
//   (priority, seq) index.
import Fleet

/// The outbox's bounds and counters, held by the store.
struct OutboxState {
    var bounds = FleetOutboxBounds()
    /// nil until first needed (one scan of the table).
    var rows: Int?
    var bytes = 0
    var failed = 0
    /// The newest gap row while it can still absorb counts (not yet handed to the library).
    var lastGap: (seq: Int64, gap: FleetGap)?
    /// Rows at or below this seq are held by the MQTT library: never dropped.
    var protectedThrough: Int64 = 0
}

/// The outbox's state for health.
public struct OutboxStatistics: Sendable, Equatable {
    public var rows: Int
    public var bytes: Int
    public var failed: Int
    /// Wall seconds of the oldest row, when there is one.
    public var oldestCreated: Int64?
}

extension NotificationStore {
    /// Bounds for later inserts.
    public var outboxBounds: FleetOutboxBounds {
        get { outbox.bounds }
        set { outbox.bounds = newValue }
    }

    /// The highest seq handed to the MQTT library (not dropped when the outbox is full).
    public var outboxProtectedThrough: Int64 {
        get { outbox.protectedThrough }
        set { outbox.protectedThrough = newValue }
    }

    private func loadOutboxCounters() throws(StoreError) {
        guard outbox.rows == nil else { return }
        var rows = 0, bytes = 0, failed = 0
        try query("SELECT count(*), coalesce(sum(length(CAST(body AS BLOB))), 0), count(failed) FROM outbox", []) { s in
            rows = Int(s.int64(at: 0)); bytes = Int(s.int64(at: 1)); failed = Int(s.int64(at: 2))
        }
        outbox.rows = rows
        outbox.bytes = bytes
        outbox.failed = failed
        // The newest gap row, unsent and not failed, keeps absorbing after a restart.
        var newest: (seq: Int64, body: String)?
        try query("SELECT seq, body FROM outbox WHERE kind = 'gap' AND failed IS NULL ORDER BY seq DESC LIMIT 1", []) { s in
            newest = (s.int64(at: 0), s.string(at: 1) ?? "")
        }
        if let newest, newest.seq > outbox.protectedThrough, let g = FleetGap(body: newest.body) {
            outbox.lastGap = (newest.seq, g)
        }
    }

    /// Inside a transaction (``StoreChange/appendOutbox(_:)``).
    func appendOutbox(_ e: OutboxEntry) throws(StoreError) {
        try loadOutboxCounters()
        let size = e.body.utf8.count
        var rows = outbox.rows ?? 0
        let bounds = outbox.bounds
        var insert = true
        if !bounds.admits(rows: rows, bytes: outbox.bytes, adding: size) {
            var dropped: [(type: String, count: Int)] = []
            var from = Int64.max, to = Int64(0)
            var priority = 3
            while priority >= max(e.priority, 1) {
                while rows > bounds.lowWaterRows - 1 || outbox.bytes + size > bounds.lowWaterBytes {
                    var batch: [(seq: Int64, kind: String, bytes: Int, failed: Bool)] = []
                    try query("""
                        SELECT seq, kind, length(CAST(body AS BLOB)), failed IS NOT NULL FROM outbox
                        WHERE priority = ?1 AND seq > ?2 AND kind != 'gap' ORDER BY seq LIMIT 256
                        """, [.integer(Int64(priority)), .integer(outbox.protectedThrough)]) { s in
                        batch.append((s.int64(at: 0), s.string(at: 1) ?? "", Int(s.int64(at: 2)), s.int64(at: 3) != 0))
                    }
                    if batch.isEmpty { break }
                    var enough = false
                    for row in batch {
                        if !(rows > bounds.lowWaterRows - 1 || outbox.bytes + size > bounds.lowWaterBytes) { enough = true; break }
                        try run("DELETE FROM outbox WHERE seq = ?1", [.integer(row.seq)])
                        rows -= 1
                        outbox.bytes -= row.bytes
                        if row.failed { outbox.failed -= 1 }
                        from = min(from, row.seq)
                        to = max(to, row.seq)
                        if let i = dropped.firstIndex(where: { $0.type == row.kind }) { dropped[i].count += 1 } else { dropped.append((row.kind, 1)) }
                    }
                    if enough { break }
                }
                priority -= 1
            }
            outbox.rows = rows
            var refused: [(type: String, count: Int)] = []
            if !bounds.admits(rows: rows, bytes: outbox.bytes, adding: size) {
                insert = false
                refused = [(e.kind, 1)]
            }
            try recordGap(from: from == Int64.max ? 0 : from, to: to, dropped: dropped, refused: refused, created: e.created, topic: e.topic)
            rows = outbox.rows ?? rows
        }
        guard insert else { return }
        try run("INSERT INTO outbox (kind, topic, priority, body, created) VALUES (?1, ?2, ?3, ?4, ?5)",
                [.text(e.kind), .text(e.topic), .integer(Int64(e.priority)), .text(e.body), .integer(e.created)])
        outbox.rows = rows + 1
        outbox.bytes += size
    }

    /// Writes (or merges into the newest gap row not yet handed to the library) the announcement
    /// of what was dropped.
    private func recordGap(from: Int64, to: Int64, dropped: [(type: String, count: Int)], refused: [(type: String, count: Int)],
                           created: Int64, topic: String) throws(StoreError) {
        if let last = outbox.lastGap, last.seq > outbox.protectedThrough {
            var g = last.gap
            if from > 0 {
                g.from = g.from == 0 ? from : min(g.from, from)
                g.to = max(g.to, to)
            }
            for d in dropped {
                if let i = g.dropped.firstIndex(where: { $0.type == d.type }) { g.dropped[i].count += d.count } else { g.dropped.append(d) }
            }
            for r in refused {
                if let i = g.refused.firstIndex(where: { $0.type == r.type }) { g.refused[i].count += r.count } else { g.refused.append(r) }
            }
            let old = last.gap.body.utf8.count
            let body = g.body
            try run("UPDATE outbox SET body = ?2 WHERE seq = ?1", [.integer(last.seq), .text(body)])
            outbox.bytes += body.utf8.count - old
            outbox.lastGap = (last.seq, g)
            return
        }
        let g = FleetGap(from: from, to: to, dropped: dropped, refused: refused)
        let body = g.body
        try run("INSERT INTO outbox (kind, topic, priority, body, created) VALUES ('gap', ?1, 0, ?2, ?3)",
                [.text(topic), .text(body), .integer(created)])
        outbox.rows = (outbox.rows ?? 0) + 1
        outbox.bytes += body.utf8.count
        outbox.lastGap = (db.lastInsertRowID, g)
    }

    /// Up to `limit` rows after `seq`, not failed, in seq order.
    public func outboxRows(after seq: Int64, limit: Int) throws(StoreError) -> [OutboxRow] {
        var rows: [OutboxRow] = []
        try query("""
            SELECT seq, kind, topic, body, length(CAST(body AS BLOB)) FROM outbox
            WHERE seq > ?1 AND failed IS NULL ORDER BY seq LIMIT ?2
            """, [.integer(seq), .integer(Int64(max(0, limit)))]) { s in
            rows.append(OutboxRow(seq: s.int64(at: 0), kind: s.string(at: 1) ?? "", topic: s.string(at: 2) ?? "",
                                  body: s.string(at: 3) ?? "", bytes: Int(s.int64(at: 4))))
        }
        return rows
    }

    /// Deletes acknowledged rows (one transaction), given with their body sizes.
    public func deleteOutbox(_ acked: [(seq: Int64, bytes: Int)], sync: Bool = false) throws(StoreError) {
        guard !acked.isEmpty else { return }
        try loadOutboxCounters()
        let before = outbox
        do throws(StoreError) {
            try db.transaction { () throws(StoreError) in
                for a in acked where try run("DELETE FROM outbox WHERE seq = ?1", [.integer(a.seq)]) > 0 {
                    outbox.rows = (outbox.rows ?? 1) - 1
                    outbox.bytes -= a.bytes
                    if outbox.lastGap?.seq == a.seq { outbox.lastGap = nil }
                }
            }
        } catch {
            outbox = before
            throw error
        }
    }

    /// Marks a row the broker refused (kept for health, not sent again by this process).
    public func markOutboxFailed(seq: Int64, reason: String) throws(StoreError) {
        try loadOutboxCounters()
        if try run("UPDATE outbox SET failed = ?2 WHERE seq = ?1 AND failed IS NULL", [.integer(seq), .text(reason)]) > 0 {
            outbox.failed += 1
        }
        if outbox.lastGap?.seq == seq { outbox.lastGap = nil }
    }

    /// Depth, bytes, failed rows and the oldest row's time.
    public func outboxStatistics() throws(StoreError) -> OutboxStatistics {
        try loadOutboxCounters()
        var oldest: Int64?
        try query("SELECT created FROM outbox ORDER BY seq LIMIT 1", []) { s in oldest = s.int64(at: 0) }
        return OutboxStatistics(rows: outbox.rows ?? 0, bytes: outbox.bytes, failed: outbox.failed, oldestCreated: oldest)
    }
}
