import Foundation
import Testing
@testable import FencepostLinux

/// The SQLite wrapper on its own: binding, reading, errors, transactions, migrations.
@Suite struct SQLiteWrapperTests {
    @Test func valuesRoundTrip() throws {
        let folder = try TempFolder()
        let db = try SQLiteDatabase(path: folder.path("t.db"))
        try db.exec("CREATE TABLE t (i INTEGER, s TEXT, b INTEGER)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3)")
        let rows: [(Int64?, String?, Bool)] = [(.max, "", true), (.min, "\u{0}x\u{0}", false), (nil, nil, true), (0, "🚐 ü", false)]
        for (i, s, b) in rows {
            try insert.bind(i, at: 1)
            try insert.bind(s, at: 2)
            try insert.bind(b, at: 3)
            try insert.run()
            insert.reset()
        }
        let select = try db.prepare("SELECT i, s, b FROM t ORDER BY rowid")
        #expect(select.columnCount == 3)
        var read: [(Int64?, String?, Bool)] = []
        while try select.step() { read.append((select.optionalInt64(at: 0), select.string(at: 1), select.bool(at: 2))) }
        #expect(read.count == rows.count)
        for (a, b) in zip(read, rows) {
            #expect(a.0 == b.0 && a.1 == b.1 && a.2 == b.2)
        }
        // The empty string is text, not NULL.
        #expect(try db.scalarInt64("SELECT count(*) FROM t WHERE s = ''") == 1)
        #expect(try db.scalarInt64("SELECT count(*) FROM t WHERE s IS NULL") == 1)
    }

    @Test func resetClearsBindings() throws {
        let folder = try TempFolder()
        let db = try SQLiteDatabase(path: folder.path("t.db"))
        let s = try db.prepare("SELECT ?1")
        try s.bind(Int64(5), at: 1)
        #expect(try s.step())
        #expect(s.int64(at: 0) == 5)
        s.reset()
        #expect(try s.step())
        #expect(s.isNull(at: 0))
    }

    @Test func cachedStatementIsReused() throws {
        let folder = try TempFolder()
        let db = try SQLiteDatabase(path: folder.path("t.db"))
        let a = try db.cachedStatement("SELECT 1")
        let b = try db.cachedStatement("SELECT 1")
        #expect(a === b)
        #expect(try db.cachedStatement("SELECT 2") !== a)
    }

    @Test func errorsCarryCodeNameMessagePathAndSQL() throws {
        let folder = try TempFolder()
        let path = folder.path("t.db")
        let db = try SQLiteDatabase(path: path)
        do {
            _ = try db.prepare("SELEC 1")
            Issue.record("prepared bad SQL")
        } catch {
            #expect(error.codeName == "SQLITE_ERROR")
            #expect(error.message.contains("syntax error"))
            #expect(error.path == path)
            #expect(error.sql == "SELEC 1")
            #expect(error.description.contains(path) && error.description.contains("SELEC 1"))
        }
        try db.exec("CREATE TABLE u (k TEXT PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
        try db.exec("INSERT INTO u VALUES ('a', 'x')")
        do {
            try db.exec("INSERT INTO u VALUES ('b', 'x')")
            Issue.record("inserted a duplicate")
        } catch {
            #expect(error.codeName == "SQLITE_CONSTRAINT_UNIQUE")
            #expect(error.isUniqueViolation)
        }
        do {
            try db.exec("INSERT INTO u VALUES ('c', NULL)")
            Issue.record("inserted NULL")
        } catch {
            #expect(error.codeName == "SQLITE_CONSTRAINT_NOTNULL")
            #expect(!error.isUniqueViolation)
        }
        do {
            _ = try SQLiteDatabase(path: folder.path("missing/t.db"))
            Issue.record("opened in a missing folder")
        } catch {
            #expect(error.primaryCode == 14)  // SQLITE_CANTOPEN
            #expect(error.path == folder.path("missing/t.db"))
        }
    }

    struct Boom: SQLiteErrorConvertible, Equatable {
        var sqlite: SQLiteError?
        init(_ error: SQLiteError) { sqlite = error }
        init() { sqlite = nil }
    }

    @Test func transactionRollsBackOnThrow() throws {
        let folder = try TempFolder()
        let db = try SQLiteDatabase(path: folder.path("t.db"))
        try db.exec("CREATE TABLE t (x)")
        #expect(throws: Boom()) {
            try db.transaction { () throws(Boom) in
                do throws(SQLiteError) { try db.exec("INSERT INTO t VALUES (1)") } catch { throw Boom(error) }
                throw Boom()
            }
        }
        #expect(db.isAutocommit)
        #expect(try db.scalarInt64("SELECT count(*) FROM t") == 0)
        let n = try db.transaction { () throws(SQLiteError) -> Int64 in
            try db.exec("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
            return try db.scalarInt64("SELECT count(*) FROM t") ?? -1
        }
        #expect(n == 2)
        #expect(try db.scalarInt64("SELECT count(*) FROM t") == 2)
    }

    @Test func busyWriterTimesOutWithTypedError() throws {
        let folder = try TempFolder()
        let path = folder.path("t.db")
        let a = try SQLiteDatabase(path: path)
        try a.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x)")
        let b = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 50)
        try a.exec("BEGIN IMMEDIATE")
        do {
            try b.transaction { () throws(SQLiteError) in try b.exec("INSERT INTO t VALUES (1)") }
            Issue.record("second writer got the lock")
        } catch {
            #expect(error.primaryCode == 5)  // SQLITE_BUSY
            #expect(error.codeName.hasPrefix("SQLITE_BUSY"))
        }
        try a.exec("COMMIT")
        try b.transaction { () throws(SQLiteError) in try b.exec("INSERT INTO t VALUES (1)") }
        #expect(try a.scalarInt64("SELECT count(*) FROM t") == 1)
    }

    @Test func migrationsApplyInOrderAndAFailedStepRollsBack() throws {
        let folder = try TempFolder()
        let path = folder.path("m.db")
        let v1 = SQLiteMigration.sql("one", "CREATE TABLE a (x)")
        let v2 = SQLiteMigration.sql("two", "CREATE TABLE b (x)")
        let bad = SQLiteMigration.sql("bad", "CREATE TABLE c (x); CREATE TABLE c (y)")
        let db = try SQLiteDatabase(path: path)
        #expect(try db.migrate([v1]) == 0)
        #expect(try db.userVersion() == 1)
        #expect(try db.migrate([v1]) == 1)  // already there: nothing to do
        do {
            try db.migrate([v1, v2, bad])
            Issue.record("bad step applied")
        } catch {
            guard case .failed(step: 3, name: "bad", let e) = error else { Issue.record("\(error)"); return }
            #expect(e.message.contains("already exists"))
        }
        // Step 2 stayed; step 3 was rolled back entirely (no table c).
        #expect(try db.userVersion() == 2)
        #expect(try db.scalarInt64("SELECT count(*) FROM sqlite_master WHERE name = 'c'") == 0)
        #expect(try db.scalarInt64("SELECT count(*) FROM sqlite_master WHERE name = 'b'") == 1)
        #expect(throws: SQLiteMigrationError.newerSchema(path: path, found: 2, known: 1)) { try db.migrate([v1]) }
    }
}
