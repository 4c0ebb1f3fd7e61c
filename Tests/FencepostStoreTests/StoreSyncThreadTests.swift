import Foundation
import Testing
@testable import FencepostLinux

/// The state file's fsyncs on a thread of their own (an fsync behind a zone-set build's writes
/// takes 50–83 ms, which the agent's loop must not wait for): generations in order, the
/// checkpoint done there, a failed sync reported and kept, and the blocking `sync()` still
/// meaning "durable".
@Suite struct StoreSyncThreadTests {
    /// Waits (polling the completion descriptor, as the agent's epoll would) until `generation`
    /// is durable; fails after 10 s.
    static func waitFor(_ generation: UInt64, _ store: NotificationStore, _ fd: FileDescriptor) throws -> UInt64 {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
            let done = try store.completedSyncs()
            if done >= generation { return done }
        }
        Issue.record("generation \(generation) not durable after 10 s")
        return 0
    }

    @Test func generationsCompleteInOrderAndNothingToSyncAsksNothing() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("before"))], sync: false)
        let fd = try store.startSyncThread()
        // What was unsynced at the start was synced by it, the blocking way.
        #expect(!store.hasUnsyncedCommits)
        #expect(store.requestSync() == 0, "nothing committed since: no generation asked for")

        var last: UInt64 = 0
        for i in 0..<20 {
            try store.apply([.putRequest(Sample.request("r\(i)"))], sync: false)
            let g = store.requestSync()
            #expect(g == last + 1, "commit \(i): generation \(g) after \(last)")
            #expect(store.requestSync() == g, "a second request without a commit made a new generation")
            if i % 5 == 4 { #expect(try Self.waitFor(g, store, fd) >= g) }
            last = g
        }
        #expect(try Self.waitFor(last, store, fd) == last)
        #expect(store.failedCheckpoints == 0)
        try store.close()
        let reopened = try NotificationStore(path: folder.path("state.db"))
        #expect(try reopened.load().requests.count == 21)
    }

    /// Past 1,000 frames the thread checkpoints after the sync (with its own connection): the
    /// loop's next commit starts the log again. Without it the log would keep growing.
    @Test func theThreadCheckpointsPastTheThreshold() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        let fd = try store.startSyncThread()
        for i in 0..<1_500 { try store.apply([.putRequest(Sample.request("r\(i)"))], sync: false) }
        #expect(store.walFrames > NotificationStore.checkpointFrames, "the log reached only \(store.walFrames) frames")
        let g = store.requestSync()
        _ = try Self.waitFor(g, store, fd)
        try store.apply([.removeRequest(id: "r0")], sync: false)
        #expect(store.walFrames < 20, "the log was not checkpointed by the sync thread: \(store.walFrames) frames")
        #expect(store.failedCheckpoints == 0)
        try store.sync()   // the blocking form with the thread: waits for it
        #expect(!store.hasUnsyncedCommits)
        #expect(try store.load().requests.count == 1_499)
    }

    /// An fdatasync that fails (here on /dev/null: EINVAL) is reported by `completed()` and
    /// stays reported: nothing after it may be called durable.
    @Test func aFailedSyncIsReportedAndKept() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("a"))])
        let thread = try StoreSyncThread(logPath: "/dev/null", databasePath: folder.path("state.db"))
        let g = thread.request(checkpoint: false)
        #expect(throws: Errno(rawValue: EINVAL)) { try thread.wait(for: g) }
        #expect(throws: Errno(rawValue: EINVAL)) { _ = try thread.completed() }
        _ = thread.request(checkpoint: false)
        #expect(throws: Errno(rawValue: EINVAL)) { _ = try thread.completed() }
        thread.stop()   // joins a thread that ended after the failure
    }

    /// A log that cannot be opened is a clear error naming it, at start.
    @Test func aMissingLogIsAClearError() throws {
        let folder = try TempFolder()
        do {
            _ = try StoreSyncThread(logPath: folder.path("nothing-wal"), databasePath: folder.path("state.db"))
            Issue.record("a sync thread started on a log that does not exist")
        } catch {
            #expect(error.description.contains("nothing-wal") && error.description.contains("ENOENT"), "\(error)")
        }
    }

    /// Stopping finishes what was asked: the thread is joined after its last sync, not before.
    @Test func stopFinishesTheRequestedSyncs() throws {
        let folder = try TempFolder()
        let store = try NotificationStore(path: folder.path("state.db"))
        try store.apply([.putRequest(Sample.request("a"))])
        let thread = try StoreSyncThread(logPath: folder.path("state.db-wal"), databasePath: folder.path("state.db"))
        var last: UInt64 = 0
        for _ in 0..<50 { last = thread.request(checkpoint: false) }
        thread.stop()
        #expect(try thread.completed() == last, "the thread stopped before the syncs asked of it")
    }
}
