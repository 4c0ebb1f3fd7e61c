/// The agent's durable state: pending requests, delivered notifications, categories, a small
/// key–value table and the history of non-delivery outcomes, in one SQLite file.
///
/// Durability: the file is in write-ahead-log mode. ``apply(_:sync:)`` commits one
/// `BEGIN IMMEDIATE` transaction (all of the batch or nothing) and then, by default, fsyncs the WAL:
/// when it returns, the batch is on disk and a power cut at any later instant keeps it; a cut
/// before it returns keeps none of it. With `sync: false` the fsync waits for ``sync()``: the batch
/// then survives a crash of the process at once (the kernel has it) and a power cut only after
/// ``sync()`` — the agent uses this to switch the buzzer on between the two (`synchronous=NORMAL`
/// plus an explicit sync of the WAL is `synchronous=FULL` with the fsync moved later).
///
/// The user's file is never deleted or replaced: a file that is not a database, or that a newer
/// program wrote, is an error naming the file, and nothing is written to it.
///
/// One owner, one thread (the agent's event loop). Statements are prepared once per store.
public final class NotificationStore {
    /// The database file.
    public let path: String
    /// How many outcome rows are kept (the newest).
    public let outcomeCapacity: Int
    /// How many removed delivery ids are remembered for the duplicate-fire guard (the newest).
    public let removedDeliveryMemory: Int
    /// The connection (internal for tests that read its pragmas).
    let db: SQLiteDatabase

    /// Opens the store at `path`, creating the file or migrating its schema as needed.
    ///
    /// - Throws: ``StoreError/notADatabase(path:_:)``, ``StoreError/newerSchema(path:found:known:)``,
    ///   ``StoreError/walUnavailable(path:journalMode:)``, ``StoreError/migrationFailed(path:step:name:_:)``,
    ///   or ``StoreError/sqlite(_:)`` (cannot open, locked, I/O).
    /// With `guardState` (the agent), the file is locked for the store's life (``StateFileLock``:
    /// a second agent on it is refused, naming the first's pid) and watched by a ``StateFileGuard``: a marker from a
    /// previous run without its database, or a file the process may not write, is refused here, and
    /// a commit into a file that was removed meanwhile fails.
    public init(path: String, outcomeCapacity: Int = 10_000, removedDeliveryMemory: Int = 10_000,
                guardState: Bool = false) throws(StoreError) {
        precondition(outcomeCapacity > 0 && removedDeliveryMemory >= 0)
        self.path = path
        self.outcomeCapacity = outcomeCapacity
        self.removedDeliveryMemory = removedDeliveryMemory
        let guarded = guardState && !path.isEmpty && path != ":memory:" && !path.hasPrefix("file:")
        // The checks (stat and access only) first, so that a file this process may not write is
        // named as such; then the lock, before anything is opened or written.
        if guarded { try StateFileGuard.checkBeforeOpening(path: path) }
        lock = guarded ? try StateFileLock(statePath: path) : nil
        do { db = try SQLiteDatabase(path: path) } catch { throw StoreError(error) }
        // Read-only checks first: nothing may be written to a file we cannot use.
        do { try db.checkNotNewer(than: StoreSchema.migrations) } catch { throw StoreError(error) }
        let mode: String
        do { mode = try db.scalarString("PRAGMA journal_mode = WAL") ?? "" } catch { throw StoreError(error) }
        guard mode.lowercased() == "wal" else { throw StoreError.walUnavailable(path: path, journalMode: mode) }
        do {
            try db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -512")
            // The log is checkpointed at sync, after the agent acted, not inside a commit.
            try db.deferCheckpoints()
        } catch {
            throw StoreError(error)
        }
        do { try db.migrate(StoreSchema.migrations) } catch { throw StoreError(error) }
        do { removedDeliveries = try db.scalarInt64("SELECT count(*) FROM delivery WHERE removed = 1") ?? 0 } catch {
            throw StoreError(error)
        }
        stateGuard = guarded ? try StateFileGuard(path: path) : nil
    }

    /// The fleet outbox's counters and bounds (NotificationStore+Outbox.swift).
    var outbox = OutboxState()

    /// Notices the file or its directory removed while open (checked after every commit).
    let stateGuard: StateFileGuard?
    /// One agent per state file: held while the store is open (the agent's life).
    let lock: StateFileLock?

    /// Closes the file (after the sync thread, if started, has finished what was asked). Later
    /// calls fail with an `SQLITE_MISUSE` error. Also done on release.
    public func close() throws(StoreError) {
        syncThread?.stop()
        syncThread = nil
        do { try db.close() } catch { throw StoreError(error) }
    }

    // MARK: Writing

    /// Applies `changes` in order, in one transaction: when it returns, all of them are durable;
    /// when it throws, none was applied.
    ///
    /// - Parameter sync: fsync the WAL before returning (default); false leaves that to ``sync()``.
    /// - Complexity: one fsync of the WAL per call (about a millisecond on an SSD, more on an SD
    ///   card), plus O(log n) per change. Batch the changes of one engine step into one call.
    public func apply(_ changes: [StoreChange], sync: Bool = true) throws(StoreError) {
        try apply(contentsOf: changes, sync: sync)
    }

    /// As ``apply(_:sync:)``, for changes made while they are written: the rows of a million
    /// added requests (their JSON text) then never exist all at once. Nothing happens for an
    /// empty sequence; it is iterated once.
    public func apply(contentsOf changes: some Sequence<StoreChange>, sync: Bool = true) throws(StoreError) {
        var rest = changes.makeIterator()
        guard let first = rest.next() else { return }
        try commit(first, &rest)
        hasUnsyncedCommits = true
        if sync { try self.sync() }
    }

    /// Frees SQLite's cached pages (after start-up, which read the whole file once).
    public func releaseMemory() { db.releaseMemory() }

    /// Rows of removed deliveries (kept for the duplicate-fire guard), counted so that pruning them
    /// is a short delete of the oldest, not a scan past the newest `removedDeliveryMemory` in every
    /// commit that removes one (each delivery beyond the delivered cap does, before its buzzer).
    private var removedDeliveries: Int64 = 0

    /// Frames in the write-ahead log at which ``sync()`` checkpoints it (SQLite's default).
    static let checkpointFrames = 1_000

    /// Frames in the write-ahead log after the last commit (checkpointed at ``sync()``).
    public var walFrames: Int { db.walFrames }

    /// Whether a commit made with `sync: false` still waits for ``sync()``.
    public private(set) var hasUnsyncedCommits = false

    /// Makes every commit so far durable against a power cut (one fsync of the WAL); nothing to do
    /// when no commit waits. With the sync thread started, it does the fsync and this waits for it.
    public func sync() throws(StoreError) {
        if let thread = syncThread {
            let generation = requestSync()
            do { try thread.wait(for: generation) } catch { throw .syncFailed(path: path + "-wal", operation: "fdatasync", error) }
            try stateGuard?.check()
            return
        }
        guard hasUnsyncedCommits else { return }
        do { try db.syncJournal() } catch { throw StoreError(error) }
        // A commit into a file no name leads to any more is not durable: it is a failure. Checked
        // here, where a commit becomes durable, once for all the commits it covers.
        try stateGuard?.check()
        hasUnsyncedCommits = false
        // SQLite's own threshold, moved here from inside the commit (see deferCheckpoints). A
        // checkpoint that fails (a reader holds the log) is retried at the next sync.
        if db.walFrames >= Self.checkpointFrames { try? db.checkpoint() }
    }

    // MARK: Syncing on a thread of its own

    /// The thread that makes commits durable (``startSyncThread()``), nil until then.
    private var syncThread: StoreSyncThread?

    /// From now on the fsyncs run on a thread of their own (``StoreSyncThread``): ``requestSync()``
    /// asks for one without waiting, and ``completedSyncs()`` says, when the returned descriptor
    /// is readable, how far commits are durable. What is unsynced now is synced first, and the
    /// folder once, for the log's name (SQLite does that at its first sync of a new log, which its
    /// own sync no longer makes). Returns the descriptor to watch (readable after each sync; the
    /// store closes it).
    /// Start it after the signal mask is set: the thread inherits it.
    public func startSyncThread() throws(StoreError) -> FileDescriptor {
        if let t = syncThread { return FileDescriptor(rawValue: t.completionDescriptor) }
        try sync()
        let directory = StateFileGuard.directory(of: path)
        do {
            let folder = try FileDescriptor.openForReading(directory)
            defer { try? folder.close() }
            try folder.synchronize()
        } catch {
            throw .syncFailed(path: directory, operation: "fsync of the folder", error)
        }
        let thread = try StoreSyncThread(logPath: path + "-wal", databasePath: path)
        syncThread = thread
        return FileDescriptor(rawValue: thread.completionDescriptor)
    }

    /// Asks the sync thread to make every commit so far durable, and returns the generation that
    /// covers them (``completedSyncs()`` reaches it). With no commit waiting, the last generation
    /// asked for is returned (perhaps already durable). Never waits.
    /// - Precondition: ``startSyncThread()`` was called.
    public func requestSync() -> UInt64 {
        guard let thread = syncThread else { preconditionFailure("requestSync before startSyncThread") }
        guard hasUnsyncedCommits else { return thread.requested }
        hasUnsyncedCommits = false
        // SQLite's threshold (see deferCheckpoints): the thread checkpoints after the sync.
        return thread.request(checkpoint: db.walFrames >= Self.checkpointFrames)
    }

    /// The newest generation durable, once the sync thread's descriptor was readable (it is
    /// emptied here). Throws when a sync failed, or when the file is gone (``StateFileGuard``):
    /// nothing after the last good generation may be reported done. Never waits.
    public func completedSyncs() throws(StoreError) -> UInt64 {
        guard let thread = syncThread else { return 0 }
        let done: UInt64
        do { done = try thread.completed() } catch { throw .syncFailed(path: path + "-wal", operation: "fdatasync", error) }
        try stateGuard?.check()
        return done
    }

    /// Checkpoints the sync thread tried and SQLite refused (retried at the next sync past the threshold).
    public var failedCheckpoints: Int { syncThread?.checkpointFailures ?? 0 }

    private func commit<Rest: IteratorProtocol<StoreChange>>(_ first: StoreChange, _ rest: inout Rest) throws(StoreError) {
        var removed = removedDeliveries
        // The outbox counters follow the transaction: put back when it rolls back.
        let outboxBefore = outbox
        do throws(StoreError) { try commitTransaction(first, &rest, &removed) } catch {
            outbox = outboxBefore
            throw error
        }
        removedDeliveries = removed
    }

    private func commitTransaction<Rest: IteratorProtocol<StoreChange>>(_ first: StoreChange, _ rest: inout Rest, _ removed: inout Int64) throws(StoreError) {
        try db.transaction { () throws(StoreError) in
            var appendedOutcome = false
            var next: StoreChange? = first
            while let change = next {
                try perform(change)
                switch change {
                case .appendOutcome: appendedOutcome = true
                case .removeDelivery, .removeAllDeliveries: removed += db.changes  // rows newly marked removed
                default: break
                }
                next = rest.next()
            }
            if appendedOutcome {
                // Outcomes are appended (seq = max + 1) and pruned from the oldest only, so their
                // seqs are contiguous: the newest `outcomeCapacity` are those above max − capacity.
                try run("DELETE FROM outcome WHERE seq <= (SELECT max(seq) FROM outcome) - ?1",
                        [.integer(Int64(outcomeCapacity))])
            }
            let excess = removed - Int64(removedDeliveryMemory)
            if excess > 0 {
                removed -= try run("""
                    DELETE FROM delivery WHERE seq IN (SELECT seq FROM delivery WHERE removed = 1 ORDER BY seq LIMIT ?1)
                    """, [.integer(excess)])
            }
        }
    }

    private func perform(_ change: StoreChange) throws(StoreError) {
        switch change {
        case .putRequest(let r):
            // REPLACE deletes the row with the same id and inserts a new one with a larger seq.
            try run("INSERT OR REPLACE INTO request (id, json, state) VALUES (?1, ?2, ?3)",
                    [.text(r.id), .text(r.json), .text(r.state)])
        case let .setRequestState(id, state):
            if try run("UPDATE request SET state = ?2 WHERE id = ?1", [.text(id), .text(state)]) == 0 {
                throw .unknownRequest(id: id)
            }
        case .removeRequest(let id):
            try run("DELETE FROM request WHERE id = ?1", [.text(id)])
        case .removeAllRequests:
            try run("DELETE FROM request", [])
        case .putDelivery(let d):
            do {
                try runSQLite("""
                    INSERT INTO delivery (delivery_id, request_id, json, scheduled_at, delivered_at, outcome,
                        response, responded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    """,
                    [.text(d.deliveryID), .text(d.requestID), .text(d.json), SQLiteValue(d.scheduledAt),
                     .integer(d.deliveredAt), .text(d.outcome), SQLiteValue(d.response), SQLiteValue(d.respondedAt)])
            } catch where error.isUniqueViolation {
                throw .duplicateDelivery(deliveryID: d.deliveryID)
            } catch {
                throw StoreError(error)
            }
        case let .setDeliveryResponse(id, response, at):
            let changed = try run(
                "UPDATE delivery SET response = ?2, responded_at = ?3 WHERE delivery_id = ?1 AND removed = 0",
                [.text(id), .text(response), .integer(at)])
            if changed == 0 { throw .unknownDelivery(deliveryID: id) }
        case .removeDelivery(let id):
            try run("UPDATE delivery SET removed = 1 WHERE delivery_id = ?1 AND removed = 0", [.text(id)])
        case .removeAllDeliveries:
            try run("UPDATE delivery SET removed = 1 WHERE removed = 0", [])
        case .replaceCategories(let categories):
            try run("DELETE FROM category", [])
            for c in categories {
                do {
                    try runSQLite("INSERT INTO category (id, json) VALUES (?1, ?2)", [.text(c.id), .text(c.json)])
                } catch where error.isUniqueViolation {
                    throw .duplicateCategory(id: c.id)
                } catch {
                    throw StoreError(error)
                }
            }
        case let .setMeta(key, value):
            try run("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", [.text(key), .text(value)])
        case .removeMeta(let key):
            try run("DELETE FROM meta WHERE key = ?1", [.text(key)])
        case .putAppliedRequest(let a):
            try run("INSERT OR REPLACE INTO \(a.owner.table) (id, fingerprint) VALUES (?1, ?2)",
                    [.text(a.id), .integer(Int64(bitPattern: a.fingerprint))])
        case .removeAppliedRequest(let id):
            try run("DELETE FROM applied_request WHERE id = ?1", [.text(id)])
            try run("DELETE FROM fleet_applied_request WHERE id = ?1", [.text(id)])
        case .appendOutcome(let o):
            try run("INSERT INTO outcome (at, request_id, event, detail) VALUES (?1, ?2, ?3, ?4)",
                    [.integer(o.at), .text(o.requestID), .text(o.event), .text(o.detail)])
        case .appendOutbox(let e):
            try appendOutbox(e)
        }
    }

    // MARK: Reading

    /// Everything but the outcome history, read from one consistent snapshot.
    public func load() throws(StoreError) -> StoreSnapshot {
        try db.readTransaction { () throws(StoreError) in
            var snapshot = StoreSnapshot(requests: [], deliveries: [], categories: [], meta: [:])
            try query("SELECT id, json, state FROM request ORDER BY seq", []) { s in
                snapshot.requests.append(StoredRequest(id: s.string(at: 0) ?? "", json: s.string(at: 1) ?? "",
                                                       state: s.string(at: 2) ?? ""))
            }
            try query("""
                SELECT delivery_id, request_id, json, scheduled_at, delivered_at, outcome, response, responded_at
                FROM delivery WHERE removed = 0 ORDER BY seq
                """, []) { s in
                snapshot.deliveries.append(StoredDelivery(
                    deliveryID: s.string(at: 0) ?? "", requestID: s.string(at: 1) ?? "", json: s.string(at: 2) ?? "",
                    scheduledAt: s.optionalInt64(at: 3), deliveredAt: s.int64(at: 4), outcome: s.string(at: 5) ?? "",
                    response: s.string(at: 6), respondedAt: s.optionalInt64(at: 7)))
            }
            try query("SELECT id, json FROM category ORDER BY seq", []) { s in
                snapshot.categories.append(StoredCategory(id: s.string(at: 0) ?? "", json: s.string(at: 1) ?? ""))
            }
            try query("SELECT key, value FROM meta", []) { s in
                snapshot.meta[s.string(at: 0) ?? ""] = s.string(at: 1) ?? ""
            }
            return snapshot
        }
    }

    /// The requests `apply` installed, in install order. Not part of ``load()``: the agent needs
    /// them only while it applies a configuration, and at a million zones they would cost tens of
    /// megabytes for the life of the process.
    public func appliedRequests(owner: ApplyOwner = .configuration) throws(StoreError) -> [AppliedRequestRecord] {
        var result: [AppliedRequestRecord] = []
        try query("SELECT id, fingerprint FROM \(owner.table) ORDER BY seq", []) { s in
            result.append(AppliedRequestRecord(id: s.string(at: 0) ?? "", fingerprint: UInt64(bitPattern: s.int64(at: 1)), owner: owner))
        }
        return result
    }

    /// Up to `limit` of the requests `apply` installed that come after install position `after`
    /// (0: from the first), in install order, and the position of the last one read: the memory
    /// read a page at a time, so that a large one is read across loop turns.
    /// - Complexity: O(log n + `limit`) (a range of the table's integer primary key).
    public func appliedRequests(owner: ApplyOwner, after: Int64, limit: Int) throws(StoreError) -> (records: [AppliedRequestRecord], last: Int64) {
        var result: [AppliedRequestRecord] = []
        var last = after
        try query("SELECT seq, id, fingerprint FROM \(owner.table) WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                  [.integer(after), .integer(Int64(max(limit, 0)))]) { s in
            last = s.int64(at: 0)
            result.append(AppliedRequestRecord(id: s.string(at: 1) ?? "", fingerprint: UInt64(bitPattern: s.int64(at: 2)), owner: owner))
        }
        return (result, last)
    }

    /// The newest `limit` outcomes, newest last.
    public func outcomes(limit: Int) throws(StoreError) -> [StoredOutcome] {
        var result: [StoredOutcome] = []
        try query("""
            SELECT at, request_id, event, detail FROM
                (SELECT seq, at, request_id, event, detail FROM outcome ORDER BY seq DESC LIMIT ?1)
            ORDER BY seq
            """, [.integer(Int64(max(0, limit)))]) { s in
            result.append(StoredOutcome(at: s.int64(at: 0), requestID: s.string(at: 1) ?? "",
                                        event: s.string(at: 2) ?? "", detail: s.string(at: 3) ?? ""))
        }
        return result
    }

    // MARK: Statements

    /// Runs a cached statement that returns no rows; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue]) throws(StoreError) -> Int64 {
        do { return try runSQLite(sql, values) } catch { throw StoreError(error) }
    }

    @discardableResult
    private func runSQLite(_ sql: String, _ values: [SQLiteValue]) throws(SQLiteError) -> Int64 {
        let statement = try db.cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        try statement.run()
        return db.changes
    }

    /// Runs a cached query, calling `row` for each result row.
    func query(_ sql: String, _ values: [SQLiteValue], row: (SQLiteStatement) -> Void) throws(StoreError) {
        do {
            let statement = try db.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(values)
            while try statement.step() { row(statement) }
        } catch {
            throw StoreError(error)
        }
    }
}
