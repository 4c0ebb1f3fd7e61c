// Synchronization's `Mutex` is not in Embedded Swift's stdlib; the shell uses only its `withLock`,
// which this pthread mutex gives the Embedded Swift build (board/cross-build) under the same name.
#if hasFeature(Embedded)
import CFencepostLinux

/// A value behind a pthread mutex: the part of Synchronization's `Mutex` the shell uses.
final class Mutex<Value>: @unchecked Sendable {
    private var value: Value
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    init(_ initialValue: Value) {
        value = initialValue
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(lock, nil) == 0, "pthread_mutex_init")
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}
#endif
