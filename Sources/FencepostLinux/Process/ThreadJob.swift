// ThreadJob: one function run on a thread of its own, its end reported on an eventfd that the
// caller's event loop watches. For work that may block or take long and that the loop must not
// wait for: reading the configuration again on SIGHUP (a file on a slow card, a FIFO nobody has
// written yet, 66 ms of parsing for 3,000 `[[request]]` tables).
//
//   loop thread                                job thread
//   ThreadJob(body) → watch `descriptor`       value = body()   (touches nothing of the loop's)
//   … the next turns go on …                   eventfd += 1; returns
//   descriptor readable → finish(): join, value
//
// The body must not touch what the loop thread uses: it gets what it needs by value (a path, a
// flag) and returns a new value. The handover is ordered by `pthread_join` in ``finish()``; the
// two threads never hold the same object at once (Swift's reference counts are atomic in both
// builds, Embedded included: `lock incq` in its swift_retain).
import CFencepostLinux
#if canImport(Glibc)
import Glibc
#endif

/// One function on its own thread; the caller learns of its end from ``descriptor``.
public final class ThreadJob<Value, Failure: Error> {
    /// The body's result, written by the thread before it ends, read after the join.
    private final class Cell {
        var result: Result<Value, Failure>?
    }

    private let box: ThreadJobBox
    private let cell = Cell()
    private var thread: pthread_t?
    /// Readable (an eventfd) once the body has returned. Owned by the job: do not close it.
    public let descriptor: FileDescriptor

    /// Starts `body` on a new thread (it inherits the caller's signal mask). Throws when no
    /// eventfd or thread can be had: the caller may then run the body itself.
    public init(_ body: @escaping () throws(Failure) -> Value) throws(Errno) {
        let event = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard event >= 0 else { throw Errno.current }
        let cell = self.cell
        box = ThreadJobBox(event: event) {
            do throws(Failure) { cell.result = .success(try body()) } catch { cell.result = .failure(error) }
        }
        descriptor = FileDescriptor(rawValue: event)
        var started = pthread_t()
        let retained = Unmanaged.passRetained(box).toOpaque()
        let rc = pthread_create(&started, nil, threadJobMain, retained)
        guard rc == 0 else {
            Unmanaged<ThreadJobBox>.fromOpaque(retained).release()
            throw Errno(rawValue: rc)
        }
        thread = started
    }

    deinit { detach() }

    /// Whether the thread was started and neither joined nor let go.
    public var isRunning: Bool { thread != nil }

    /// After ``descriptor`` was readable: waits for the thread to end (it is returning) and gives
    /// the body's result. Call once.
    public func finish() -> Result<Value, Failure> {
        guard let t = thread else { preconditionFailure("ThreadJob.finish called twice, or after detach") }
        thread = nil
        pthread_join(t, nil)
        guard let result = cell.result else { preconditionFailure("the job's thread ended without a result") }
        cell.result = nil
        return result
    }

    /// Lets go of a job that may not have ended (at stop, with the body perhaps blocked in a
    /// read): the thread runs on and frees what it holds when it returns; its result is dropped.
    public func detach() {
        guard let t = thread else { return }
        thread = nil
        pthread_detach(t)
    }
}

/// What the thread holds: the function to run and the eventfd to signal. Not generic, so that
/// the thread's C entry point can name it. The last of the job and the thread to let go of it
/// closes the eventfd, so a detached thread never writes to a reused descriptor number.
final class ThreadJobBox {
    let event: Int32
    var run: (() -> Void)?
    init(event: Int32, run: @escaping () -> Void) { self.event = event; self.run = run }
    deinit { close(event) }
}

/// The thread's body: run the job's function, then say so on the eventfd.
private func threadJobMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let box = Unmanaged<ThreadJobBox>.fromOpaque(raw!).takeRetainedValue()
    box.run?()
    box.run = nil   // what the function captured goes now, on this thread
    var one: UInt64 = 1
    _ = write(box.event, &one, 8)
    return nil
}
