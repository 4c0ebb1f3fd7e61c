import CSQLite

/// A failed SQLite call: the (extended) result code and its name, SQLite's own message, the
/// database file, and the SQL that was running.
///
/// `description` reads like
/// "/var/lib/fencepost/state.db: SQLITE_NOTADB (26): file is not a database [PRAGMA user_version]".
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` = 2067, …); `code & 0xFF` is the
    /// primary code.
    public var code: Int32
    /// `sqlite3_errmsg` at the time of failure (or `sqlite3_errstr(code)` when there was no
    /// connection).
    public var message: String
    /// The database file the connection was opened on.
    public var path: String
    /// The statement that failed, when there was one.
    public var sql: String?

    public init(code: Int32, message: String, path: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sql = sql
    }

    /// The primary result code (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_UNIQUE`).
    public var primaryCode: Int32 { code & 0xFF }

    /// The C name of the code: "SQLITE_NOTADB", "SQLITE_CONSTRAINT_UNIQUE", or, for an extended
    /// code this table does not know, the primary name with the number ("SQLITE_IOERR (+ 3850)").
    public var codeName: String {
        if let name = SQLiteError.extendedNames[code] { return name }
        let primary = SQLiteError.primaryNames[primaryCode] ?? "SQLITE_UNKNOWN"
        return code == primaryCode ? primary : "\(primary) (+ \(code))"
    }

    /// True for `SQLITE_NOTADB`: the file exists but is not an SQLite database.
    public var isNotADatabase: Bool { primaryCode == SQLITE_NOTADB }

    /// True for a violated `UNIQUE` or `PRIMARY KEY` constraint.
    public var isUniqueViolation: Bool { code == Self.uniqueConstraintCode || code == Self.primaryKeyConstraintCode }

    public var description: String {
        var s = "\(path): \(codeName) (\(code)): \(message)"
        if let sql { s += " [\(sql)]" }
        return s
    }

    // The extended codes are macros built with `|` and `<<`, which Swift does not import.
    static let uniqueConstraintCode: Int32 = SQLITE_CONSTRAINT | (8 << 8)
    static let primaryKeyConstraintCode: Int32 = SQLITE_CONSTRAINT | (6 << 8)

    static let primaryNames: [Int32: String] = [
        SQLITE_OK: "SQLITE_OK", SQLITE_ERROR: "SQLITE_ERROR", SQLITE_INTERNAL: "SQLITE_INTERNAL",
        SQLITE_PERM: "SQLITE_PERM", SQLITE_ABORT: "SQLITE_ABORT", SQLITE_BUSY: "SQLITE_BUSY",
        SQLITE_LOCKED: "SQLITE_LOCKED", SQLITE_NOMEM: "SQLITE_NOMEM", SQLITE_READONLY: "SQLITE_READONLY",
        SQLITE_INTERRUPT: "SQLITE_INTERRUPT", SQLITE_IOERR: "SQLITE_IOERR", SQLITE_CORRUPT: "SQLITE_CORRUPT",
        SQLITE_NOTFOUND: "SQLITE_NOTFOUND", SQLITE_FULL: "SQLITE_FULL", SQLITE_CANTOPEN: "SQLITE_CANTOPEN",
        SQLITE_PROTOCOL: "SQLITE_PROTOCOL", SQLITE_EMPTY: "SQLITE_EMPTY", SQLITE_SCHEMA: "SQLITE_SCHEMA",
        SQLITE_TOOBIG: "SQLITE_TOOBIG", SQLITE_CONSTRAINT: "SQLITE_CONSTRAINT", SQLITE_MISMATCH: "SQLITE_MISMATCH",
        SQLITE_MISUSE: "SQLITE_MISUSE", SQLITE_NOLFS: "SQLITE_NOLFS", SQLITE_AUTH: "SQLITE_AUTH",
        SQLITE_FORMAT: "SQLITE_FORMAT", SQLITE_RANGE: "SQLITE_RANGE", SQLITE_NOTADB: "SQLITE_NOTADB",
        SQLITE_NOTICE: "SQLITE_NOTICE", SQLITE_WARNING: "SQLITE_WARNING", SQLITE_ROW: "SQLITE_ROW",
        SQLITE_DONE: "SQLITE_DONE",
    ]

    /// The extended codes this project is likely to meet (sqlite3.h, "Extended Result Codes").
    static let extendedNames: [Int32: String] = [
        SQLITE_CONSTRAINT | (1 << 8): "SQLITE_CONSTRAINT_CHECK",
        SQLITE_CONSTRAINT | (3 << 8): "SQLITE_CONSTRAINT_FOREIGNKEY",
        SQLITE_CONSTRAINT | (5 << 8): "SQLITE_CONSTRAINT_NOTNULL",
        SQLITE_CONSTRAINT | (6 << 8): "SQLITE_CONSTRAINT_PRIMARYKEY",
        SQLITE_CONSTRAINT | (8 << 8): "SQLITE_CONSTRAINT_UNIQUE",
        SQLITE_BUSY | (1 << 8): "SQLITE_BUSY_RECOVERY",
        SQLITE_BUSY | (2 << 8): "SQLITE_BUSY_SNAPSHOT",
        SQLITE_BUSY | (3 << 8): "SQLITE_BUSY_TIMEOUT",
        SQLITE_CANTOPEN | (1 << 8): "SQLITE_CANTOPEN_NOTEMPDIR",
        SQLITE_CANTOPEN | (2 << 8): "SQLITE_CANTOPEN_ISDIR",
        SQLITE_CANTOPEN | (3 << 8): "SQLITE_CANTOPEN_FULLPATH",
        SQLITE_READONLY | (1 << 8): "SQLITE_READONLY_RECOVERY",
        SQLITE_READONLY | (2 << 8): "SQLITE_READONLY_CANTLOCK",
        SQLITE_READONLY | (3 << 8): "SQLITE_READONLY_ROLLBACK",
        SQLITE_READONLY | (4 << 8): "SQLITE_READONLY_DBMOVED",
        SQLITE_IOERR | (1 << 8): "SQLITE_IOERR_READ",
        SQLITE_IOERR | (2 << 8): "SQLITE_IOERR_SHORT_READ",
        SQLITE_IOERR | (3 << 8): "SQLITE_IOERR_WRITE",
        SQLITE_IOERR | (4 << 8): "SQLITE_IOERR_FSYNC",
        SQLITE_IOERR | (6 << 8): "SQLITE_IOERR_TRUNCATE",
        SQLITE_IOERR | (10 << 8): "SQLITE_IOERR_DELETE",
        SQLITE_IOERR | (13 << 8): "SQLITE_IOERR_ACCESS",
        SQLITE_IOERR | (15 << 8): "SQLITE_IOERR_LOCK",
        SQLITE_IOERR | (18 << 8): "SQLITE_IOERR_SHMOPEN",
        SQLITE_IOERR | (19 << 8): "SQLITE_IOERR_SHMSIZE",
        SQLITE_IOERR | (21 << 8): "SQLITE_IOERR_SHMMAP",
        SQLITE_CORRUPT | (1 << 8): "SQLITE_CORRUPT_VTAB",
    ]
}
