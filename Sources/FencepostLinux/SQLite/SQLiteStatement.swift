import CSQLite

/// A prepared SQL statement: bind parameters (1-based, as in SQL's `?1`), step through rows,
/// read columns (0-based), reset. Finalized when released, or by its connection's `close()`
/// when it is a cached statement.
///
/// Text is bound and read as UTF-8 with an explicit length, so an empty string stays an empty
/// string (not NULL) and embedded NUL bytes survive.
public final class SQLiteStatement {
    private var stmt: OpaquePointer?
    private let connection: OpaquePointer
    private let path: String

    init(_ stmt: OpaquePointer, connection: OpaquePointer, path: String) {
        self.stmt = stmt
        self.connection = connection
        self.path = path
    }

    deinit { finalize() }

    /// The SQL text this statement was prepared from. The corresponding C function is `sqlite3_sql`.
    public var sql: String { stmt.map(SQLiteCalls.sql) ?? "" }

    // MARK: Binding

    /// Binds an integer. The corresponding C function is `sqlite3_bind_int64`.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try _check(SQLiteCalls.bindInt64(live(), index, value)).get()
    }

    /// Binds a Boolean as 0 or 1.
    public func bind(_ value: Bool, at index: Int32) throws(SQLiteError) {
        try bind(value ? 1 as Int64 : 0, at: index)
    }

    /// Binds text, copied by SQLite (`SQLITE_TRANSIENT`). The corresponding C function is
    /// `sqlite3_bind_text`.
    public func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        let stmt = live()
        var text = value
        let rc = text.withUTF8 { bytes -> Int32 in
            // An empty buffer may have no base address, and a NULL pointer would bind SQL NULL.
            if bytes.isEmpty { return "".withCString { SQLiteCalls.bindText(stmt, index, $0, 0) } }
            return bytes.withMemoryRebound(to: CChar.self) {
                SQLiteCalls.bindText(stmt, index, $0.baseAddress!, Int32(clamping: $0.count))
            }
        }
        try _check(rc).get()
    }

    /// Binds SQL NULL. The corresponding C function is `sqlite3_bind_null`.
    public func bindNull(at index: Int32) throws(SQLiteError) {
        try _check(SQLiteCalls.bindNull(live(), index)).get()
    }

    /// Binds an optional integer (nil is NULL).
    public func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds optional text (nil is NULL).
    public func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds `values` to parameters 1, 2, … in order.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .integer(let v): try bind(v, at: index)
            case .text(let v): try bind(v, at: index)
            case .null: try bindNull(at: index)
            }
        }
    }

    // MARK: Stepping

    /// Advances to the next row: true when a row is available, false when the statement is
    /// done. The corresponding C function is `sqlite3_step`.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool { try _step().get() }

    /// Steps to the end, for statements that return no rows (`INSERT`, `UPDATE`, `DELETE`).
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    /// Makes the statement ready to run again and clears its bindings to NULL. Does not report
    /// an error: `sqlite3_reset` only repeats the error of the last step, which `step()` already
    /// threw. The corresponding C functions are `sqlite3_reset` and `sqlite3_clear_bindings`.
    public func reset() {
        guard let stmt else { return }
        _ = SQLiteCalls.reset(stmt)
        _ = SQLiteCalls.clearBindings(stmt)
    }

    // MARK: Columns (valid after `step()` returned true)

    /// The number of columns in a result row. The corresponding C function is `sqlite3_column_count`.
    public var columnCount: Int32 { SQLiteCalls.columnCount(live()) }

    /// True when the column is SQL NULL. The corresponding C function is `sqlite3_column_type`.
    public func isNull(at index: Int32) -> Bool { SQLiteCalls.columnType(live(), index) == SQLITE_NULL }

    /// The column as an integer (NULL reads as 0). The corresponding C function is `sqlite3_column_int64`.
    public func int64(at index: Int32) -> Int64 { SQLiteCalls.columnInt64(live(), index) }

    /// The column as an integer, nil for NULL.
    public func optionalInt64(at index: Int32) -> Int64? { isNull(at: index) ? nil : int64(at: index) }

    /// The column as a Boolean (non-zero is true).
    public func bool(at index: Int32) -> Bool { int64(at: index) != 0 }

    /// The column as text, nil for NULL. Invalid UTF-8 is repaired with U+FFFD. The
    /// corresponding C functions are `sqlite3_column_text` and `sqlite3_column_bytes`.
    public func string(at index: Int32) -> String? {
        let stmt = live()
        if SQLiteCalls.columnType(stmt, index) == SQLITE_NULL { return nil }
        // column_text first, then column_bytes: the order SQLite documents as safe.
        guard let text = SQLiteCalls.columnText(stmt, index) else { return "" }
        let count = Int(SQLiteCalls.columnBytes(stmt, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    // MARK: Internal layer

    func _step() -> Result<Bool, SQLiteError> {
        switch SQLiteCalls.step(live()) {
        case SQLITE_ROW: return .success(true)
        case SQLITE_DONE: return .success(false)
        case let rc: return .failure(error(rc))
        }
    }

    func _check(_ rc: Int32) -> Result<Void, SQLiteError> {
        rc == SQLITE_OK ? .success(()) : .failure(error(rc))
    }

    func error(_ rc: Int32) -> SQLiteError {
        let extended = SQLiteCalls.extendedErrcode(connection)
        let code = (extended & 0xFF) == (rc & 0xFF) ? extended : rc
        return SQLiteError(code: code, message: SQLiteCalls.errmsg(connection), path: path, sql: sql)
    }

    /// Finalizes now; later use is a programming error. The corresponding C function is `sqlite3_finalize`.
    func finalize() {
        if let stmt { _ = SQLiteCalls.finalize(stmt) }
        stmt = nil
    }

    private func live() -> OpaquePointer {
        guard let stmt else { preconditionFailure("SQLiteStatement used after its connection was closed") }
        return stmt
    }
}

/// A value to bind: the storage classes this project uses.
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null

    /// `.integer(value)`, or `.null` for nil.
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    /// `.text(value)`, or `.null` for nil.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
}
