/// Why the notification store could not open, load or apply changes.
///
/// Errors about the file name it ("…/state.db: not a database …"); a failed ``NotificationStore/apply(_:)``
/// has applied nothing.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file exists but is not an SQLite database (`SQLITE_NOTADB`). It was not modified.
    case notADatabase(path: String, SQLiteError)
    /// The file's schema version is newer than this binary knows. It was not modified.
    case newerSchema(path: String, found: Int64, known: Int64)
    /// The file could not be switched to write-ahead logging (e.g. a file system without
    /// shared memory); the store refuses to run without it.
    case walUnavailable(path: String, journalMode: String)
    /// A schema migration step failed and was rolled back.
    case migrationFailed(path: String, step: Int64, name: String, SQLiteError)
    /// `putDelivery` of a delivery id the store already has: a duplicate fire. Nothing of the
    /// batch was applied.
    case duplicateDelivery(deliveryID: String)
    /// `setRequestState` of an id that is not stored. Nothing of the batch was applied.
    case unknownRequest(id: String)
    /// `setDeliveryResponse` of a delivery id that is not present. Nothing of the batch was applied.
    case unknownDelivery(deliveryID: String)
    /// `replaceCategories` with the same id twice. Nothing of the batch was applied.
    case duplicateCategory(id: String)
    /// Any other SQLite failure (I/O error, disk full, locked …), with code, message, file and SQL.
    case sqlite(SQLiteError)
    /// The state file or its directory is gone, replaced, read-only, or missing where a previous
    /// run's marker says there was state (``StateFileGuard``).
    case stateLost(path: String, String)
    /// The write-ahead log could not be made durable (its `fdatasync` failed, e.g. `EIO`), or
    /// the thread that syncs it could not be set up: commits since the last good sync may be lost
    /// in a power cut, so the agent stops.
    case syncFailed(path: String, operation: String, Errno)

    public var description: String {
        switch self {
        case let .notADatabase(path, error):
            return "\(path): not a database (\(error.codeName): \(error.message)); the file was left unchanged"
        case let .newerSchema(path, found, known):
            return "\(path): newer schema (version \(found)) than this program knows (version \(known)); "
                + "the file was left unchanged — run a newer Fencepost or move the file aside"
        case let .walUnavailable(path, mode):
            return "\(path): cannot use write-ahead logging (journal_mode stays \(mode))"
        case let .migrationFailed(path, step, name, error):
            return "\(path): schema migration \(step) (\(name)) failed and was rolled back: \(error)"
        case let .duplicateDelivery(id):
            return "delivery \(id) is already stored (duplicate fire); nothing was applied"
        case let .unknownRequest(id):
            return "no request with id \(id); nothing was applied"
        case let .unknownDelivery(id):
            return "no delivered notification with id \(id); nothing was applied"
        case let .duplicateCategory(id):
            return "category id \(id) given twice; nothing was applied"
        case let .sqlite(error):
            return error.description
        case let .stateLost(path, why):
            return "\(path): \(why)"
        case let .syncFailed(path, operation, errno):
            return "\(path): \(operation) failed (\(errno.debugDescription)); the last commits may not be durable"
        }
    }
}

extension StoreError: SQLiteErrorConvertible {
    /// `.notADatabase` for `SQLITE_NOTADB`, else `.sqlite`.
    public init(_ error: SQLiteError) {
        self = error.isNotADatabase ? .notADatabase(path: error.path, error) : .sqlite(error)
    }

    init(_ error: SQLiteMigrationError) {
        switch error {
        case let .newerSchema(path, found, known): self = .newerSchema(path: path, found: found, known: known)
        case let .failed(step?, name?, e) where !e.isNotADatabase:
            self = .migrationFailed(path: e.path, step: step, name: name, e)
        case let .failed(_, _, e): self = StoreError(e)
        }
    }
}
