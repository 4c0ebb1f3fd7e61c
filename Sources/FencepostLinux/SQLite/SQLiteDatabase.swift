import CSQLite

/// Converts an ``SQLiteError`` into a caller's own error type, so that a transaction body can
/// throw the caller's errors and SQLite's through one typed `throws`.
public protocol SQLiteErrorConvertible: Error {
    init(_ error: SQLiteError)
}

extension SQLiteError: SQLiteErrorConvertible {
    public init(_ error: SQLiteError) { self = error }
}

/// One connection to an SQLite database file. Not thread-safe: one owner, one thread (the
/// agent's event loop), as SQLite's `SQLITE_OPEN_NOMUTEX` allows.
///
/// Three layers per call (swift-system's pattern): a public method that throws ``SQLiteError``,
/// an internal `_…` method returning `Result`, and a shim in ``SQLiteCalls``. Extended result
/// codes are on, so a failed `UNIQUE` reads as `SQLITE_CONSTRAINT_UNIQUE`.
///
/// Statements made with ``cachedStatement(_:)`` live as long as the connection and are
/// finalized by ``close()``; others are finalized when released (`sqlite3_close_v2` keeps the
/// connection alive until the last one is gone).
public final class SQLiteDatabase {
    /// How to open the file.
    public struct OpenFlags: OptionSet, Sendable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        /// Create the file when it does not exist (with ``readWrite``).
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// Fail with `SQLITE_CANTOPEN` when the path is a symbolic link.
        public static let noFollow = OpenFlags(rawValue: SQLITE_OPEN_NOFOLLOW)
    }

    /// The file this connection was opened on, as given.
    public let path: String
    private var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]
    /// The write-ahead log's frames after the last commit, once ``deferCheckpoints()`` was called.
    private var walFrameCount: UnsafeMutablePointer<Int32>?

    /// Opens (and with ``OpenFlags/create`` creates) the database at `path`. Opening does not
    /// read the file: a file that is not a database is noticed by the first statement
    /// (`SQLITE_NOTADB`). The corresponding C function is `sqlite3_open_v2`.
    ///
    /// - Parameter busyTimeoutMilliseconds: how long a statement waits for another connection's
    ///   lock before failing with `SQLITE_BUSY` (`sqlite3_busy_timeout`).
    public init(path: String, flags: OpenFlags = [.readWrite, .create], busyTimeoutMilliseconds: Int32 = 5_000)
        throws(SQLiteError)
    {
        self.path = path
        handle = try Self._open(path: path, flags: flags.rawValue | SQLITE_OPEN_NOMUTEX).get()
        _ = SQLiteCalls.extendedResultCodes(handle!, true)
        try setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
    }

    deinit {
        _ = _close()
        walFrameCount?.deallocate()
    }

    /// Commits do not checkpoint the write-ahead log (SQLite's default does, inside the commit
    /// that passes 1,000 pages, with two syncs); ``walFrames`` counts the log and
    /// ``checkpoint()`` is the caller's, at a time that delays nothing. The corresponding C
    /// function is `sqlite3_wal_hook`.
    public func deferCheckpoints() throws(SQLiteError) {
        let db = try db()
        if walFrameCount == nil {
            walFrameCount = .allocate(capacity: 1)
            walFrameCount!.initialize(to: 0)
        }
        SQLiteCalls.countWALFrames(db, walFrameCount!)
    }

    /// Frames in the write-ahead log after the last commit (0 before ``deferCheckpoints()``).
    public var walFrames: Int { Int(walFrameCount?.pointee ?? 0) }

    /// Copies the write-ahead log into the database file as far as no reader holds it back, and
    /// syncs both (`SQLITE_CHECKPOINT_PASSIVE`); the next commit starts the log again. The
    /// corresponding C function is `sqlite3_wal_checkpoint_v2`.
    public func checkpoint() throws(SQLiteError) {
        try check(SQLiteCalls.checkpointPassive(try db()), sql: nil).get()
        walFrameCount?.pointee = 0
    }

    /// Finalizes the cached statements and closes the connection. Safe to call twice. The
    /// corresponding C function is `sqlite3_close_v2`.
    public func close() throws(SQLiteError) { try _close().get() }

    /// Sets how long to wait for a lock held by another connection. The corresponding C
    /// function is `sqlite3_busy_timeout`.
    public func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        try check(SQLiteCalls.busyTimeout(try db(), milliseconds), sql: nil).get()
    }

    /// Runs one or more `;`-separated statements that return no rows of interest (DDL,
    /// `PRAGMA` settings). The corresponding C function is `sqlite3_exec`.
    public func exec(_ sql: String) throws(SQLiteError) {
        try check(SQLiteCalls.exec(try db(), sql), sql: sql).get()
    }

    /// A new prepared statement for one SQL statement. The corresponding C function is
    /// `sqlite3_prepare_v3`.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try _prepare(sql, persistent: false).get()
    }

    /// The prepared statement for `sql`, prepared once per connection and reset (bindings
    /// cleared) before it is handed out again.
    ///
    /// - Complexity: O(1) amortized after the first call for a given text.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = cache[sql] {
            statement.reset()
            return statement
        }
        let statement = try _prepare(sql, persistent: true).get()
        cache[sql] = statement
        return statement
    }

    /// The first column of the first row of `sql` as an integer (nil when there is no row or
    /// the value is NULL). For `PRAGMA user_version` and the like.
    public func scalarInt64(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(at: 0) ? nil : statement.int64(at: 0)
    }

    /// The first column of the first row of `sql` as text (nil when there is no row or NULL).
    public func scalarString(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.string(at: 0)
    }

    /// Writes the journal (in WAL mode, the write-ahead log) through to storage: what a commit does
    /// itself under `synchronous=FULL`. Under `NORMAL` a commit survives the process's crash at
    /// once (it is in the kernel) and a power cut after this call. The corresponding C call is the
    /// journal file's `xSync`, reached by `sqlite3_file_control(SQLITE_FCNTL_JOURNAL_POINTER)`.
    public func syncJournal() throws(SQLiteError) {
        try check(SQLiteCalls.syncJournal(try db()), sql: nil).get()
    }

    /// Frees the page cache's unused pages (they are read again when needed). The corresponding C
    /// function is `sqlite3_db_release_memory`.
    public func releaseMemory() {
        if let handle { _ = SQLiteCalls.releaseMemory(handle) }
    }

    /// True when no transaction is open. The corresponding C function is `sqlite3_get_autocommit`.
    public var isAutocommit: Bool { handle.map(SQLiteCalls.autocommit) ?? true }

    /// Rows changed by the last `INSERT`, `UPDATE` or `DELETE`. The corresponding C function is
    /// `sqlite3_changes64`.
    public var changes: Int64 { handle.map(SQLiteCalls.changes) ?? 0 }

    /// The row id of the last `INSERT`. The corresponding C function is `sqlite3_last_insert_rowid`.
    public var lastInsertRowID: Int64 { handle.map(SQLiteCalls.lastInsertRowID) ?? 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT` (the write lock is taken at the start, so
    /// the transaction cannot fail half-way with `SQLITE_BUSY` on upgrade). When `body` throws,
    /// or `COMMIT` fails, the transaction is rolled back and the error rethrown.
    public func transaction<T, E: SQLiteErrorConvertible>(_ body: () throws(E) -> T) throws(E) -> T {
        try inTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` inside a deferred `BEGIN` … `COMMIT`: the reads in `body` see one consistent
    /// snapshot of the file (in WAL mode, without blocking a writer).
    public func readTransaction<T, E: SQLiteErrorConvertible>(_ body: () throws(E) -> T) throws(E) -> T {
        try inTransaction(begin: "BEGIN", body)
    }

    /// `begin`, `body`, `COMMIT`; rolled back when `body` or `COMMIT` fails, the error rethrown.
    private func inTransaction<T, E: SQLiteErrorConvertible>(begin: String, _ body: () throws(E) -> T) throws(E) -> T {
        do { try exec(begin) } catch { throw E(error) }
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try exec("COMMIT")
        } catch {
            rollbackQuietly()
            throw E(error)
        }
        return result
    }

    /// `ROLLBACK` unless SQLite already ended the transaction (it does so itself after some
    /// errors, e.g. `SQLITE_FULL`); a failure to roll back is not reported over the first error.
    private func rollbackQuietly() {
        if let handle, !SQLiteCalls.autocommit(handle) { _ = SQLiteCalls.exec(handle, "ROLLBACK") }
    }

    // MARK: Internal layer

    static func _open(path: String, flags: Int32) -> Result<OpaquePointer, SQLiteError> {
        var db: OpaquePointer?
        let rc = SQLiteCalls.open(path, &db, flags)
        guard rc == SQLITE_OK, let db else {
            // Even on failure SQLite usually allocates a handle that carries the message.
            let message = db.map(SQLiteCalls.errmsg) ?? SQLiteCalls.errstr(rc)
            let code = db.map(SQLiteCalls.extendedErrcode) ?? rc
            if let db { _ = SQLiteCalls.close(db) }
            return .failure(SQLiteError(code: code == SQLITE_OK ? rc : code, message: message, path: path))
        }
        return .success(db)
    }

    func _close() -> Result<Void, SQLiteError> {
        guard let db = handle else { return .success(()) }
        for statement in cache.values { statement.finalize() }
        cache = [:]
        let rc = SQLiteCalls.close(db)
        handle = nil
        return rc == SQLITE_OK ? .success(()) : .failure(SQLiteError(code: rc, message: SQLiteCalls.errstr(rc), path: path))
    }

    func _prepare(_ sql: String, persistent: Bool) -> Result<SQLiteStatement, SQLiteError> {
        guard let db = handle else { return .failure(closedError(sql: sql)) }
        var stmt: OpaquePointer?
        let rc = SQLiteCalls.prepare(db, sql, persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &stmt)
        guard rc == SQLITE_OK else {
            if let stmt { _ = SQLiteCalls.finalize(stmt) }
            return .failure(error(code: rc, sql: sql))
        }
        guard let stmt else {
            // Only whitespace or a comment: SQLite returns OK and no statement.
            return .failure(SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement in the text", path: path, sql: sql))
        }
        return .success(SQLiteStatement(stmt, connection: db, path: path))
    }

    /// The open handle, or a `SQLITE_MISUSE` error after ``close()``.
    func db() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw closedError(sql: nil) }
        return handle
    }

    func check(_ rc: Int32, sql: String?) -> Result<Void, SQLiteError> {
        rc == SQLITE_OK ? .success(()) : .failure(error(code: rc, sql: sql))
    }

    /// The error for a failed call on this connection, with `sqlite3_errmsg`.
    func error(code rc: Int32, sql: String?) -> SQLiteError {
        guard let handle else { return closedError(sql: sql) }
        let extended = SQLiteCalls.extendedErrcode(handle)
        // The extended code belongs to the same failure when its primary part matches.
        let code = (extended & 0xFF) == (rc & 0xFF) ? extended : rc
        return SQLiteError(code: code, message: SQLiteCalls.errmsg(handle), path: path, sql: sql)
    }

    private func closedError(sql: String?) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: "the database connection is closed", path: path, sql: sql)
    }
}
