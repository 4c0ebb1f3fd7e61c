import Foundation
import Testing
@testable import FencepostLinux

/// The notification store on real SQLite files in a temporary folder.
@Suite struct NotificationStoreTests {
    /// Commits do not checkpoint the write-ahead log (SQLite's default checkpoint runs inside the
    /// commit that passes 1,000 pages, with two syncs, before the agent can sound the alert it
    /// committed); sync() does, once the log passed that size, and the log starts again.
    @Test func theLogIsCheckpointedAtSyncNotInsideACommit() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        var peak = 0
        for i in 0..<1_500 {
            try store.apply([StoreChange.putRequest(Sample.request("r\(i)"))], sync: false)
            peak = max(peak, store.walFrames)
            #expect(store.walFrames >= peak, "the log shrank inside commit \(i): a checkpoint ran there")
        }
        #expect(peak > NotificationStore.checkpointFrames, "the log reached only \(peak) frames")
        // The file says so too: a log checkpointed at 1,000 frames is rewritten from its start and
        // stays near 1,000 frames of 4 KiB (+24 B each); this one holds every commit's frames.
        let walBytes = try folder.bytes("state.db-wal").count
        #expect(walBytes > 1_100 * 4_120, "the log file is \(walBytes) bytes: it was checkpointed and reused")
        try store.sync()
        #expect(store.walFrames == 0)
        try store.apply([StoreChange.removeRequest(id: "r0")], sync: false)
        #expect(store.walFrames < 20, "after the checkpoint the log starts again: \(store.walFrames) frames")
        #expect(try store.load().requests.count == 1_499)
    }

    @Test func newStoreIsEmpty() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        #expect(try store.load() == StoreSnapshot(requests: [], deliveries: [], categories: [], meta: [:]))
        #expect(try store.outcomes(limit: 10) == [])
    }

    /// Changes made while they are written (a lazy sequence, as the agent passes them) land as an
    /// array of the same changes would; an empty sequence writes nothing; a failing change in the
    /// middle of a lazy batch rolls all of it back.
    @Test func lazyBatchesEqualArrays() throws {
        let folder = try TempFolder()
        let lazyStore = try NotificationStore(path: folder.path("lazy.db"))
        let arrayStore = try NotificationStore(path: folder.path("array.db"))
        let ids = (0..<2000).map { "r\($0)" }
        try lazyStore.apply(contentsOf: ids.lazy.map { StoreChange.putRequest(Sample.request($0)) })
        try arrayStore.apply(ids.map { StoreChange.putRequest(Sample.request($0)) })
        #expect(try lazyStore.load() == arrayStore.load())
        #expect(try lazyStore.load().requests.count == 2000)

        let before = try folder.bytes("lazy.db-wal")
        try lazyStore.apply(contentsOf: ids.lazy.filter { _ in false }.map { StoreChange.removeRequest(id: $0) })
        #expect(try folder.bytes("lazy.db-wal") == before, "an empty batch wrote")

        var made = 0
        let failing = (0..<10).lazy.map { i -> StoreChange in
            made += 1
            return i == 5 ? .setRequestState(id: "absent", state: "{}") : .removeRequest(id: "r\(i)")
        }
        #expect(throws: StoreError.unknownRequest(id: "absent")) { try lazyStore.apply(contentsOf: failing) }
        #expect(made == 6, "made up to the failing change, once each")
        #expect(try lazyStore.load().requests.count == 2000, "the removals before it were rolled back")
    }

    @Test func everyChangeRoundTrips() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        let water = Sample.request("water", 1), walk = Sample.request("walk", 2)
        let fire = Sample.delivery("water@1767225600")
        let enter = StoredDelivery(deliveryID: "depot@enter@1", requestID: "depot", json: "{}", scheduledAt: nil,
                                   deliveredAt: 0, outcome: "late")
        let categories = [StoredCategory(id: "reminder", json: #"{"actions":["snooze"]}"#),
                          StoredCategory(id: "alarm", json: "{}")]
        try store.apply([.putRequest(water), .putRequest(walk)])
        #expect(try store.load().requests == [water, walk])

        try store.apply([.setRequestState(id: "water", state: #"{"lastFire":1767225600}"#)])
        var expectedWater = water
        expectedWater.state = #"{"lastFire":1767225600}"#
        #expect(try store.load().requests == [expectedWater, walk])

        try store.apply([.removeRequest(id: "walk"), .removeRequest(id: "never-added")])
        #expect(try store.load().requests == [expectedWater])

        try store.apply([.removeAllRequests])
        #expect(try store.load().requests == [])

        try store.apply([.putDelivery(fire), .putDelivery(enter)])
        #expect(try store.load().deliveries == [fire, enter])

        try store.apply([.setDeliveryResponse(deliveryID: "water@1767225600", response: "snooze", at: 1_767_225_700)])
        var answered = fire
        answered.response = "snooze"
        answered.respondedAt = 1_767_225_700
        #expect(try store.load().deliveries == [answered, enter])

        try store.apply([.removeDelivery(deliveryID: "depot@enter@1"), .removeDelivery(deliveryID: "unknown")])
        #expect(try store.load().deliveries == [answered])

        try store.apply([.removeAllDeliveries])
        #expect(try store.load().deliveries == [])

        try store.apply([.replaceCategories(categories)])
        #expect(try store.load().categories == categories)
        try store.apply([.replaceCategories([categories[1]])])
        #expect(try store.load().categories == [categories[1]])
        try store.apply([.replaceCategories([])])
        #expect(try store.load().categories == [])

        try store.apply([.setMeta(key: "clock.trusted", value: "true"), .setMeta(key: "boot", value: "1")])
        try store.apply([.setMeta(key: "boot", value: "2")])
        #expect(try store.load().meta == ["clock.trusted": "true", "boot": "2"])

        try store.apply([.appendOutcome(Sample.outcome(1)), .appendOutcome(Sample.outcome(2))])
        #expect(try store.outcomes(limit: 10) == [Sample.outcome(1), Sample.outcome(2)])
    }

    @Test func textSurvivesExactly() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        let awkward = ["", "\u{0}", "a\u{0}b", "ünïcødé 🚐", "'; DROP TABLE request; --", String(repeating: "x", count: 100_000)]
        try store.apply(awkward.enumerated().map { .putRequest(StoredRequest(id: "r\($0.offset)", json: $0.element, state: $0.element)) })
        try store.apply([.setMeta(key: "", value: "")])
        let snapshot = try store.load()
        #expect(snapshot.requests.map(\.json) == awkward)
        #expect(snapshot.requests.map(\.state) == awkward)
        #expect(snapshot.meta == ["": ""])
    }

    @Test func extremeIntegersSurvive() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        let d = StoredDelivery(deliveryID: "x", requestID: "r", json: "{}", scheduledAt: .min, deliveredAt: .max,
                               outcome: "coalesced", response: "dismiss", respondedAt: -1)
        try store.apply([.putDelivery(d), .appendOutcome(StoredOutcome(at: .min, requestID: "", event: "", detail: ""))])
        #expect(try store.load().deliveries == [d])
        #expect(try store.outcomes(limit: 1) == [StoredOutcome(at: .min, requestID: "", event: "", detail: "")])
    }

    // MARK: All or nothing

    @Test func duplicateDeliveryFailsTheWholeBatch() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("water")), .putDelivery(Sample.delivery("water@1"))])
        let before = try store.load()
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "water@1")) {
            try store.apply([
                .putRequest(Sample.request("walk")),
                .setRequestState(id: "water", state: "{}"),
                .setMeta(key: "k", value: "v"),
                .appendOutcome(Sample.outcome(0)),
                .putDelivery(Sample.delivery("water@2")),
                .putDelivery(Sample.delivery("water@1")),
            ])
        }
        #expect(try store.load() == before)
        #expect(try store.outcomes(limit: 10) == [])
        // The store stays usable after the failed batch.
        try store.apply([.putDelivery(Sample.delivery("water@2"))])
        #expect(try store.load().deliveries.map(\.deliveryID) == ["water@1", "water@2"])
    }

    @Test func duplicateWithinOneBatchFails() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "a@1")) {
            try store.apply([.putDelivery(Sample.delivery("a@1")), .putDelivery(Sample.delivery("a@1"))])
        }
        #expect(try store.load().deliveries == [])
    }

    @Test func removedDeliveryStillCountsAsDelivered() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putDelivery(Sample.delivery("a@1")), .putDelivery(Sample.delivery("b@1"))])
        try store.apply([.removeDelivery(deliveryID: "a@1")])
        try store.apply([.removeAllDeliveries])
        #expect(try store.load().deliveries == [])
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "a@1")) { try store.apply([.putDelivery(Sample.delivery("a@1"))]) }
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "b@1")) { try store.apply([.putDelivery(Sample.delivery("b@1"))]) }
        // A removed delivery cannot be answered.
        #expect(throws: StoreError.unknownDelivery(deliveryID: "a@1")) {
            try store.apply([.setDeliveryResponse(deliveryID: "a@1", response: "default", at: 5)])
        }
    }

    @Test func removedDeliveryMemoryIsBounded() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"), removedDeliveryMemory: 2)
        for n in 1...4 {
            try store.apply([.putDelivery(Sample.delivery("d@\(n)"))])
            try store.apply([.removeDelivery(deliveryID: "d@\(n)")])
        }
        // d@3 and d@4 are remembered; d@1 and d@2 were forgotten and may be stored again.
        for n in 3...4 {
            #expect(throws: StoreError.duplicateDelivery(deliveryID: "d@\(n)")) { try store.apply([.putDelivery(Sample.delivery("d@\(n)"))]) }
        }
        try store.apply([.putDelivery(Sample.delivery("d@1")), .putDelivery(Sample.delivery("d@2"))])
        #expect(try store.load().deliveries.map(\.deliveryID) == ["d@1", "d@2"])
        #expect(try store.db.scalarInt64("SELECT count(*) FROM delivery WHERE removed = 1") == 2)
    }

    @Test func unknownIdsFailTheWholeBatch() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("water"))])
        let before = try store.load()
        #expect(throws: StoreError.unknownRequest(id: "walk")) {
            try store.apply([.putRequest(Sample.request("run")), .setRequestState(id: "walk", state: "{}")])
        }
        #expect(throws: StoreError.unknownDelivery(deliveryID: "nope")) {
            try store.apply([.removeAllRequests, .setDeliveryResponse(deliveryID: "nope", response: "default", at: 1)])
        }
        #expect(throws: StoreError.duplicateCategory(id: "c")) {
            try store.apply([.setMeta(key: "a", value: "b"),
                             .replaceCategories([StoredCategory(id: "c", json: "1"), StoredCategory(id: "c", json: "2")])])
        }
        #expect(try store.load() == before)
    }

    // MARK: Order

    @Test func addOrderAndReplaceOrder() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        func ids() throws -> [String] { try store.load().requests.map(\.id) }
        try store.apply([.putRequest(Sample.request("a")), .putRequest(Sample.request("b")), .putRequest(Sample.request("c"))])
        #expect(try ids() == ["a", "b", "c"])
        // A replacement moves the id to the end, with the new contents.
        try store.apply([.putRequest(Sample.request("b", 7))])
        #expect(try ids() == ["a", "c", "b"])
        #expect(try store.load().requests.last == Sample.request("b", 7))
        // Replacing the last one keeps it last; removing then adding puts it at the end.
        try store.apply([.putRequest(Sample.request("b", 8))])
        #expect(try ids() == ["a", "c", "b"])
        try store.apply([.removeRequest(id: "b"), .putRequest(Sample.request("d"))])
        #expect(try ids() == ["a", "c", "d"])
        try store.apply([.putRequest(Sample.request("b")), .putRequest(Sample.request("a"))])
        #expect(try ids() == ["c", "d", "b", "a"])
        // setRequestState does not move a request.
        try store.apply([.setRequestState(id: "c", state: "{}")])
        #expect(try ids() == ["c", "d", "b", "a"])
        // Deliveries come back in delivery order, not by id or time.
        try store.apply([.putDelivery(Sample.delivery("z@1", scheduledAt: 30)), .putDelivery(Sample.delivery("a@1", scheduledAt: 10))])
        try store.apply([.putDelivery(Sample.delivery("m@1", scheduledAt: 20))])
        #expect(try store.load().deliveries.map(\.deliveryID) == ["z@1", "a@1", "m@1"])
    }

    // MARK: Outcomes

    @Test func outcomesKeepTheNewest() throws {
        let folder = try TempFolder()
        let path = folder.path("state.db")
        let store = try NotificationStore(path: path, outcomeCapacity: 5)
        try store.apply((0..<3).map { .appendOutcome(Sample.outcome($0)) })
        #expect(try store.outcomes(limit: 100) == (0..<3).map(Sample.outcome))
        try store.apply((3..<12).map { .appendOutcome(Sample.outcome($0)) })
        #expect(try store.outcomes(limit: 100) == (7..<12).map(Sample.outcome))
        #expect(try store.outcomes(limit: 2) == (10..<12).map(Sample.outcome))
        #expect(try store.outcomes(limit: 0) == [])
        try store.apply([.appendOutcome(Sample.outcome(12))])
        #expect(try store.outcomes(limit: 100) == (8..<13).map(Sample.outcome))
        #expect(try store.db.scalarInt64("SELECT count(*) FROM outcome") == 5)
    }

    @Test func defaultOutcomeCapacityIsTenThousand() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        #expect(store.outcomeCapacity == 10_000)
        try store.apply((0..<10_050).map { .appendOutcome(Sample.outcome($0)) })
        let kept = try store.outcomes(limit: 20_000)
        #expect(kept.count == 10_000)
        #expect(kept.first == Sample.outcome(50))
        #expect(kept.last == Sample.outcome(10_049))
    }

    // MARK: Files

    @Test func reopenSeesEverything() throws {
        let folder = try TempFolder()
        let path = folder.path("state.db")
        let expected: StoreSnapshot
        let expectedOutcomes: [StoredOutcome]
        do {
            let store = try NotificationStore(path: path)
            try store.apply([.putRequest(Sample.request("a")), .putRequest(Sample.request("b")),
                             .putDelivery(Sample.delivery("a@1")), .setMeta(key: "k", value: "v"),
                             .replaceCategories([StoredCategory(id: "c", json: "{}")]),
                             .appendOutcome(Sample.outcome(1))])
            try store.apply([.putRequest(Sample.request("a", 2)),
                             .setDeliveryResponse(deliveryID: "a@1", response: "default", at: 9)])
            expected = try store.load()
            expectedOutcomes = try store.outcomes(limit: 10)
            try store.close()
        }
        #expect(expected.requests.map(\.id) == ["b", "a"])
        let reopened = try NotificationStore(path: path)
        #expect(try reopened.load() == expected)
        #expect(try reopened.outcomes(limit: 10) == expectedOutcomes)
        // The duplicate guard survives the reopen too.
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "a@1")) { try reopened.apply([.putDelivery(Sample.delivery("a@1"))]) }
    }

    @Test func reopenWithoutCloseSeesEverything() throws {
        // Two connections at once: the second sees what the first committed (WAL readers).
        let folder = try TempFolder()
        let path = folder.path("state.db")
        let first = try NotificationStore(path: path)
        try first.apply([.putRequest(Sample.request("a")), .putDelivery(Sample.delivery("a@1"))])
        let second = try NotificationStore(path: path)
        #expect(try second.load() == first.load())
        // And the duplicate guard holds across connections.
        #expect(throws: StoreError.duplicateDelivery(deliveryID: "a@1")) { try second.apply([.putDelivery(Sample.delivery("a@1"))]) }
    }

    @Test func walSynchronousNormalWithExplicitSyncAndForeignKeysAreOn() throws {
        let folder = try TempFolder()
        let path = folder.path("state.db")
        let store = try NotificationStore(path: path)
        try store.apply([.putRequest(Sample.request("a"))])
        #expect(try store.db.scalarString("PRAGMA journal_mode") == "wal")
        // NORMAL: the commit does not fsync; apply(sync: true) and sync() do (DaemonTests checks the order).
        #expect(try store.db.scalarInt64("PRAGMA synchronous") == 1)
        #expect(!store.hasUnsyncedCommits)
        try store.apply([.putRequest(Sample.request("b"))], sync: false)
        #expect(store.hasUnsyncedCommits)
        try store.sync()
        #expect(!store.hasUnsyncedCommits)
        #expect(try store.db.scalarInt64("PRAGMA foreign_keys") == 1)
        #expect(folder.exists("state.db-wal"))
        // WAL is a property of the file: another connection sees it too.
        let other = try SQLiteDatabase(path: path, flags: [.readOnly])
        #expect(try other.scalarString("PRAGMA journal_mode") == "wal")
        #expect(try other.userVersion() == Int64(StoreSchema.migrations.count))
    }

    @Test func garbageFileIsNotADatabaseAndIsLeftAlone() throws {
        let folder = try TempFolder()
        var generator = SystemRandomNumberGenerator()
        for (name, size) in [("garbage-4k.db", 4096), ("garbage-small.db", 10), ("garbage-big.db", 100_000)] {
            let garbage = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let path = try folder.write(name, garbage)
            var caught: StoreError?
            do { _ = try NotificationStore(path: path) } catch { caught = error }
            guard case .notADatabase(let errorPath, let sqlite)? = caught else {
                Issue.record("\(name): expected notADatabase, got \(String(describing: caught))")
                continue
            }
            #expect(errorPath == path)
            #expect(sqlite.codeName == "SQLITE_NOTADB")
            let text = caught!.description
            #expect(text.contains(path) && text.contains("not a database"), "\(text)")
            #expect(try folder.bytes(name) == garbage, "\(name) was modified")
            #expect(!folder.exists(name + "-wal") && !folder.exists(name + "-journal"))
        }
    }

    @Test func newerSchemaIsRefusedAndLeftAlone() throws {
        let folder = try TempFolder()
        let path = folder.path("future.db")
        do {
            let db = try SQLiteDatabase(path: path)
            try db.exec("CREATE TABLE future (x); PRAGMA user_version = 99")
            try db.close()
        }
        let before = try folder.bytes("future.db")
        var caught: StoreError?
        do { _ = try NotificationStore(path: path) } catch { caught = error }
        #expect(caught == .newerSchema(path: path, found: 99, known: Int64(StoreSchema.migrations.count)))
        let text = caught?.description ?? ""
        #expect(text.contains(path) && text.contains("newer schema"), "\(text)")
        #expect(try folder.bytes("future.db") == before)
        #expect(!folder.exists("future.db-wal"))
    }

    @Test func emptyVersionZeroFileMigrates() throws {
        let folder = try TempFolder()
        let path = try folder.write("empty.db", Data())
        let store = try NotificationStore(path: path)
        #expect(try store.db.userVersion() == Int64(StoreSchema.migrations.count))
        try store.apply([.putRequest(Sample.request("a"))])
        #expect(try store.load().requests == [Sample.request("a")])
    }

    @Test func versionOneFileMigratesToTwoKeepingItsRows() throws {
        let folder = try TempFolder()
        let path = folder.path("v1.db")
        do {
            // A file as the version 1 program left it: requests and the applied set in the meta.
            let db = try SQLiteDatabase(path: path)
            try db.migrate(Array(StoreSchema.migrations.prefix(1)))
            try db.exec("""
                INSERT INTO request (id, json, state) VALUES ('a', '{"id":"a"}', '{}');
                INSERT INTO meta (key, value) VALUES ('apply.requests', '{"a":{"id":"a"}}');
                """)
            #expect(try db.userVersion() == 1)
            try db.close()
        }
        let store = try NotificationStore(path: path)
        #expect(try store.db.userVersion() == Int64(StoreSchema.migrations.count))
        let loaded = try store.load()
        #expect(loaded.requests == [StoredRequest(id: "a", json: #"{"id":"a"}"#, state: "{}")])
        #expect(loaded.meta["apply.requests"] == #"{"a":{"id":"a"}}"#, "the meta value is the agent's to convert")
        #expect(try store.appliedRequests() == [])
        try store.apply([.putAppliedRequest(AppliedRequestRecord(id: "a", fingerprint: .max)), .removeMeta(key: "apply.requests")])
        try store.close()
        let reopened = try NotificationStore(path: path)
        #expect(try reopened.appliedRequests() == [AppliedRequestRecord(id: "a", fingerprint: .max)])
        #expect(try reopened.load().meta["apply.requests"] == nil)
    }

    @Test func missingFolderNamesTheFile() throws {
        let folder = try TempFolder()
        let path = folder.path("no/such/dir/state.db")
        var caught: StoreError?
        do { _ = try NotificationStore(path: path) } catch { caught = error }
        guard case .sqlite(let e)? = caught else { Issue.record("got \(String(describing: caught))"); return }
        #expect(e.codeName.hasPrefix("SQLITE_CANTOPEN"))
        #expect(caught!.description.contains(path))
    }

    @Test func closedStoreFailsCleanly() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("a"))])
        try store.close()
        try store.close()
        #expect(throws: StoreError.self) { try store.load() }
    }

    // MARK: Cost

    /// Prints what one durable `apply` costs (an fsync of the WAL per commit). No assertion on time.
    @Test func applyCost() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("warm"))])
        var samples: [Double] = []
        for n in 0..<200 {
            let start = ContinuousClock.now
            try store.apply([.setRequestState(id: "warm", state: #"{"lastFire":\#(n)}"#)])
            let d = ContinuousClock.now - start
            samples.append(Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12)
        }
        samples.sort()
        let mean = samples.reduce(0, +) / Double(samples.count)
        print("NotificationStore.apply of one small change (WAL, synchronous=FULL), 200 runs: median "
              + "\(Int(samples[100])) µs, p90 \(Int(samples[180])) µs, mean \(Int(mean)) µs, at \(folder.url.path)")
        #expect(try store.load().requests.first?.state == #"{"lastFire":199}"#)
    }
}
