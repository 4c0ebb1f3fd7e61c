// StoreSyncThread: the state file's fsyncs on a thread of their own, so that the event loop
// never waits for the disk (an fsync that waits behind another writer's stream takes 50–83 ms,
// and an SD card is slower).
//
// The loop commits (write(2) into the write-ahead log: the kernel has it, a crash of the process
// keeps it) and asks for a sync: a generation number that covers every commit so far. This thread
// runs `fdatasync` on its own descriptor of the log, then, when the log has grown past SQLite's
// threshold, a passive checkpoint through a second connection of its own (SQLite allows one
// connection per thread; the checkpointer syncs the log and the database itself, and a writer on
// the other connection goes on meanwhile). Then it writes to an eventfd that the loop watches:
// the loop reads the generation now durable and sends the answers that waited for it.
//
//   loop thread                               sync thread
//   commit; request() → generation g          (waiting on the condition)
//   … the next turns go on …                  fdatasync(log); checkpoint if asked
//   eventfd readable → completed() ≥ g        done = g; eventfd += 1
//
// Requests made while a sync runs are folded into the next one: one fdatasync covers them all.
// A failed fdatasync is kept (the first errno) and reported by ``completed()``: the agent then
// stops, and no answer that waited for it says "done".
//
// The thread touches only the memory of `Shared`, allocated here and freed after it is joined,
// and calls only C: no Swift object is shared between the threads.
import CFencepostLinux
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A thread that makes the store's commits durable in order, away from the caller's thread.
final class StoreSyncThread {
    /// What both threads see, behind `mutex` (the descriptors and the connection are set before
    /// the thread starts and never change).
    struct Shared {
        let mutex: UnsafeMutablePointer<pthread_mutex_t>
        let wake: UnsafeMutablePointer<pthread_cond_t>
        /// The newest generation asked for, and the newest whose fdatasync returned.
        var requested: UInt64 = 0
        var done: UInt64 = 0
        var checkpointWanted = false
        var stopping = false
        /// The errno of the first failed fdatasync (0: none).
        var failure: Int32 = 0
        /// Checkpoints that returned an error (retried at the next request past the threshold).
        var checkpointFailures = 0
        let logDescriptor: Int32
        let eventDescriptor: Int32
        let checkpointer: OpaquePointer?
    }

    private let shared: UnsafeMutablePointer<Shared>
    private var thread: pthread_t?
    private let checkpointConnection: SQLiteDatabase
    /// The eventfd the caller watches (readable after each completed sync).
    let completionDescriptor: Int32
    /// The caller's copy of `requested` (only the caller's thread asks).
    private(set) var requested: UInt64 = 0
    /// The newest generation known durable on the caller's side.
    private(set) var durable: UInt64 = 0

    /// Opens the log `logPath` and a second connection to `databasePath`, and starts the thread.
    /// Call after the signal mask is set (the thread inherits it).
    init(logPath: String, databasePath: String) throws(StoreError) {
        let log = open(logPath, O_RDONLY | O_CLOEXEC)
        guard log >= 0 else { throw .syncFailed(path: logPath, operation: "open", Errno.current) }
        let event = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard event >= 0 else {
            let e = Errno.current
            close(log)
            throw .syncFailed(path: logPath, operation: "eventfd", e)
        }
        let connection: SQLiteDatabase
        do {
            connection = try SQLiteDatabase(path: databasePath, flags: [.readWrite], busyTimeoutMilliseconds: 0)
            // The checkpointer syncs the log before it copies and the database after (NORMAL).
            try connection.exec("PRAGMA synchronous = NORMAL")
        } catch {
            close(log); close(event)
            throw StoreError(error)
        }
        checkpointConnection = connection
        completionDescriptor = event
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        wake.initialize(to: pthread_cond_t())
        pthread_cond_init(wake, nil)
        shared = .allocate(capacity: 1)
        shared.initialize(to: Shared(mutex: mutex, wake: wake, logDescriptor: log, eventDescriptor: event,
                                     checkpointer: try? connection.db()))
        // On failure, deinit (self is whole) closes and frees what was opened here.
        var started = pthread_t()
        let rc = pthread_create(&started, nil, storeSyncThreadMain, UnsafeMutableRawPointer(shared))
        guard rc == 0 else { throw .syncFailed(path: logPath, operation: "pthread_create", Errno(rawValue: rc)) }
        thread = started
    }

    deinit {
        stop()
        close(completionDescriptor)
        Self.release(shared)
        try? checkpointConnection.close()
    }

    private var stopped = false

    /// Finishes what was asked (every requested sync runs), then ends and joins the thread.
    func stop() {
        guard !stopped, let thread else { return }
        stopped = true
        pthread_mutex_lock(shared.pointee.mutex)
        shared.pointee.stopping = true
        pthread_cond_signal(shared.pointee.wake)
        pthread_mutex_unlock(shared.pointee.mutex)
        pthread_join(thread, nil)
    }

    private static func release(_ shared: UnsafeMutablePointer<Shared>) {
        close(shared.pointee.logDescriptor)
        pthread_cond_destroy(shared.pointee.wake)
        pthread_mutex_destroy(shared.pointee.mutex)
        shared.pointee.wake.deallocate()
        shared.pointee.mutex.deallocate()
        shared.deinitialize(count: 1)
        shared.deallocate()
    }

    /// Asks for a sync of every commit made so far (and a checkpoint after it when `checkpoint`);
    /// returns the generation that will cover them. Never waits.
    func request(checkpoint: Bool) -> UInt64 {
        requested += 1
        pthread_mutex_lock(shared.pointee.mutex)
        shared.pointee.requested = requested
        if checkpoint { shared.pointee.checkpointWanted = true }
        pthread_cond_signal(shared.pointee.wake)
        pthread_mutex_unlock(shared.pointee.mutex)
        return requested
    }

    /// The generation durable now, after the completion descriptor was readable (it is emptied
    /// here); throws the first failed fdatasync's error. Never waits.
    func completed() throws(Errno) -> UInt64 {
        var count: UInt64 = 0
        _ = read(completionDescriptor, &count, 8)
        pthread_mutex_lock(shared.pointee.mutex)
        let done = shared.pointee.done
        let failure = shared.pointee.failure
        pthread_mutex_unlock(shared.pointee.mutex)
        if failure != 0 { throw Errno(rawValue: failure) }
        durable = max(durable, done)
        return durable
    }

    /// Waits until `generation` is durable (or a sync failed). For start-up and stopping, where
    /// the caller has nothing else to do.
    func wait(for generation: UInt64) throws(Errno) {
        while true {
            let done = try completed()
            if done >= generation { return }
            var p = pollfd(fd: completionDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 1_000)
        }
    }

    /// Checkpoints whose SQLite call returned an error so far.
    var checkpointFailures: Int {
        pthread_mutex_lock(shared.pointee.mutex)
        defer { pthread_mutex_unlock(shared.pointee.mutex) }
        return shared.pointee.checkpointFailures
    }
}

/// The thread's body: wait for a request, fdatasync the log, checkpoint when asked, report.
private func storeSyncThreadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let s = raw!.assumingMemoryBound(to: StoreSyncThread.Shared.self)
    pthread_mutex_lock(s.pointee.mutex)
    while true {
        while !s.pointee.stopping && s.pointee.requested == s.pointee.done && !s.pointee.checkpointWanted {
            pthread_cond_wait(s.pointee.wake, s.pointee.mutex)
        }
        let target = s.pointee.requested
        let checkpoint = s.pointee.checkpointWanted
        if target == s.pointee.done && !checkpoint { break }   // stopping, nothing left
        s.pointee.checkpointWanted = false
        let syncs = target > s.pointee.done
        let log = s.pointee.logDescriptor
        let db = s.pointee.checkpointer
        pthread_mutex_unlock(s.pointee.mutex)

        var failure: Int32 = 0
        if syncs {
            while fdatasync(log) != 0 {
                let e = errno
                if e != EINTR { failure = e; break }
            }
        }
        var checkpointFailed = false
        if checkpoint && failure == 0, let db {
            checkpointFailed = fencepost_sqlite3_checkpoint_passive(db) != SQLITE_OK
        }

        pthread_mutex_lock(s.pointee.mutex)
        if failure == 0 { s.pointee.done = target } else if s.pointee.failure == 0 { s.pointee.failure = failure }
        if checkpointFailed { s.pointee.checkpointFailures += 1 }
        var one: UInt64 = 1
        _ = write(s.pointee.eventDescriptor, &one, 8)
        if failure != 0 { break }   // nothing after a failed sync is durable: the owner stops
    }
    pthread_mutex_unlock(s.pointee.mutex)
    return nil
}
