/// One step of a schema's history: what turns version `n - 1` into version `n`, where `n` is the
/// step's position in the list (from 1). Steps are never edited once shipped; a change is a new
/// step at the end.
public struct SQLiteMigration: Sendable {
    /// For messages: "create the notification tables".
    public var name: String
    /// Runs inside the step's transaction; must not begin or commit one itself.
    public var apply: @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void

    public init(name: String, apply: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> Void) {
        self.name = name
        self.apply = apply
    }

    /// A step that runs a fixed SQL script.
    public static func sql(_ name: String, _ script: String) -> SQLiteMigration {
        SQLiteMigration(name: name) { (db: SQLiteDatabase) throws(SQLiteError) in try db.exec(script) }
    }
}

/// Why a database could not be brought to the schema this binary knows.
public enum SQLiteMigrationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file's `user_version` is beyond the last known step: a newer Fencepost wrote it.
    /// Nothing was changed.
    case newerSchema(path: String, found: Int64, known: Int64)
    /// Reading the version, or running a step, failed; the step was rolled back.
    case failed(step: Int64?, name: String?, SQLiteError)

    public var description: String {
        switch self {
        case let .newerSchema(path, found, known):
            return "\(path): newer schema (version \(found)) than this program knows (version \(known)); "
                + "the file was left unchanged — run a newer Fencepost or move the file aside"
        case let .failed(step?, name?, error):
            return "migration \(step) (\(name)) failed: \(error)"
        case let .failed(_, _, error):
            return "\(error)"
        }
    }
}

extension SQLiteDatabase {
    /// The schema version stored in the file header (`PRAGMA user_version`); 0 for a new file.
    /// Reading it is the first read of the file, so a file that is not a database fails here
    /// with `SQLITE_NOTADB`.
    public func userVersion() throws(SQLiteError) -> Int64 {
        try scalarInt64("PRAGMA user_version") ?? 0
    }

    /// Fails with ``SQLiteMigrationError/newerSchema(path:found:known:)`` when the file's version
    /// is beyond `steps.count`, without writing anything.
    public func checkNotNewer(than steps: [SQLiteMigration]) throws(SQLiteMigrationError) {
        let found: Int64
        do { found = try userVersion() } catch { throw .failed(step: nil, name: nil, error) }
        if found > Int64(steps.count) { throw .newerSchema(path: path, found: found, known: Int64(steps.count)) }
    }

    /// Brings the schema up to `steps.count`, applying each missing step in its own
    /// `BEGIN IMMEDIATE` transaction together with the new `user_version`, so a crash between
    /// steps leaves a consistent, resumable file. Returns the version found before migrating.
    ///
    /// The version is re-read inside each transaction: when two processes migrate at once, the
    /// second one sees the first one's work and skips it.
    @discardableResult
    public func migrate(_ steps: [SQLiteMigration]) throws(SQLiteMigrationError) -> Int64 {
        try checkNotNewer(than: steps)
        let initial: Int64
        do { initial = try userVersion() } catch { throw .failed(step: nil, name: nil, error) }
        for (offset, step) in steps.enumerated() {
            let version = Int64(offset + 1)
            if version <= initial { continue }
            do {
                try transaction { () throws(SQLiteError) in
                    let current = try userVersion()
                    if current >= version { return }
                    try step.apply(self)
                    try exec("PRAGMA user_version = \(version)")
                }
            } catch {
                throw .failed(step: version, name: step.name, error)
            }
        }
        return initial
    }
}
