import CSQLite

/// The only code in Fencepost that calls `sqlite3_*` directly: one-line shims (swift-system's
/// lowest layer). ``SQLiteDatabase`` and ``SQLiteStatement`` build on these; nothing else in the
/// shell sees a raw SQLite call or pointer.
///
/// SQLite has no `EINTR` to retry: it restarts interrupted system calls itself. A locked database
/// is waited for by `sqlite3_busy_timeout`, set once per connection.
enum SQLiteCalls {
    /// `SQLITE_TRANSIENT`: "copy the bytes before returning". The C macro is
    /// `((sqlite3_destructor_type)-1)`, which Swift does not import (design §7).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func open(_ path: String, _ db: inout OpaquePointer?, _ flags: Int32) -> Int32 {
        sqlite3_open_v2(path, &db, flags, nil)
    }
    static func close(_ db: OpaquePointer) -> Int32 { sqlite3_close_v2(db) }
    static func extendedResultCodes(_ db: OpaquePointer, _ on: Bool) -> Int32 { sqlite3_extended_result_codes(db, on ? 1 : 0) }
    static func busyTimeout(_ db: OpaquePointer, _ milliseconds: Int32) -> Int32 { sqlite3_busy_timeout(db, milliseconds) }
    static func exec(_ db: OpaquePointer, _ sql: String) -> Int32 { sqlite3_exec(db, sql, nil, nil, nil) }
    static func prepare(_ db: OpaquePointer, _ sql: String, _ flags: UInt32, _ stmt: inout OpaquePointer?) -> Int32 {
        sqlite3_prepare_v3(db, sql, -1, flags, &stmt, nil)
    }
    static func errmsg(_ db: OpaquePointer) -> String { String(cString: sqlite3_errmsg(db)) }
    static func errstr(_ code: Int32) -> String { String(cString: sqlite3_errstr(code)) }
    static func extendedErrcode(_ db: OpaquePointer) -> Int32 { sqlite3_extended_errcode(db) }
    static func autocommit(_ db: OpaquePointer) -> Bool { sqlite3_get_autocommit(db) != 0 }
    static func changes(_ db: OpaquePointer) -> Int64 { Int64(sqlite3_changes64(db)) }
    static func lastInsertRowID(_ db: OpaquePointer) -> Int64 { Int64(sqlite3_last_insert_rowid(db)) }
    static func syncJournal(_ db: OpaquePointer) -> Int32 { fencepost_sqlite3_sync_journal(db) }
    static func releaseMemory(_ db: OpaquePointer) -> Int32 { sqlite3_db_release_memory(db) }
    static func countWALFrames(_ db: OpaquePointer, _ frames: UnsafeMutablePointer<Int32>) { fencepost_sqlite3_count_wal_frames(db, frames) }
    static func checkpointPassive(_ db: OpaquePointer) -> Int32 { fencepost_sqlite3_checkpoint_passive(db) }

    static func step(_ stmt: OpaquePointer) -> Int32 { sqlite3_step(stmt) }
    static func reset(_ stmt: OpaquePointer) -> Int32 { sqlite3_reset(stmt) }
    static func clearBindings(_ stmt: OpaquePointer) -> Int32 { sqlite3_clear_bindings(stmt) }
    static func finalize(_ stmt: OpaquePointer) -> Int32 { sqlite3_finalize(stmt) }
    static func bindInt64(_ stmt: OpaquePointer, _ index: Int32, _ value: Int64) -> Int32 { sqlite3_bind_int64(stmt, index, value) }
    static func bindNull(_ stmt: OpaquePointer, _ index: Int32) -> Int32 { sqlite3_bind_null(stmt, index) }
    static func bindText(_ stmt: OpaquePointer, _ index: Int32, _ bytes: UnsafePointer<CChar>, _ count: Int32) -> Int32 {
        sqlite3_bind_text(stmt, index, bytes, count, transient)
    }
    static func columnCount(_ stmt: OpaquePointer) -> Int32 { sqlite3_column_count(stmt) }
    static func columnType(_ stmt: OpaquePointer, _ index: Int32) -> Int32 { sqlite3_column_type(stmt, index) }
    static func columnInt64(_ stmt: OpaquePointer, _ index: Int32) -> Int64 { sqlite3_column_int64(stmt, index) }
    static func columnText(_ stmt: OpaquePointer, _ index: Int32) -> UnsafePointer<UInt8>? { sqlite3_column_text(stmt, index) }
    static func columnBytes(_ stmt: OpaquePointer, _ index: Int32) -> Int32 { sqlite3_column_bytes(stmt, index) }
    static func sql(_ stmt: OpaquePointer) -> String { sqlite3_sql(stmt).map { String(cString: $0) } ?? "" }
}
