// Where test bodies run. Swift Testing runs every test on the cooperative pool, one thread per
// core (2 on CI). A synchronous test that waits for a child process (an agent, a broker, gpsfake)
// holds its thread for all of its waits, so with two such tests running, every other test waits,
// however short: a full run is then the sum of the waits divided by two, and a `.timeLimit` fails
// tests that were only queued. Two traits move the waiting elsewhere:
//
//   .processes   the suite's tests run on ``TestThreads/processes``, a pool as wide as the
//                cooperative one: as many process tests at once as before (the machine's load
//                and the timing figures the tests judge stay the same), while the pure tests go on
//                on the cooperative pool beside them.
//   .ownThread   each job of the test runs on a thread of its own: for an `async` test that spends
//                minutes suspended (the ten-minute link cut), so that neither its start nor its
//                resumptions wait behind other tests.
//
// Expectations and issues are recorded as usual: the body runs inside the test's task (a task
// executor preference), with its task-locals.
import Foundation
import Testing

/// A task executor of `width` threads taking jobs in order.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// The pool of ``ProcessTests`` (`.processes`): as wide as the cooperative pool.
    public static let processes = TestThreads(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init(width: Int) {
        for i in 0 ..< width {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "process tests \(i)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}

/// A task executor that runs each job on a new thread (for tests that are mostly suspended).
public final class ThreadPerJob: TaskExecutor, @unchecked Sendable {
    public static let shared = ThreadPerJob()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let thread = Thread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// `.processes`: the tests of a suite that start processes and wait for them run on
/// ``TestThreads/processes`` (see the top of the file).
public struct ProcessTests: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(TestThreads.processes) { try await function() }
    }
}

/// `.ownThread`: a mostly suspended test runs each job on a thread of its own.
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJob.shared) { try await function() }
    }
}

extension Trait where Self == ProcessTests {
    /// The suite's tests start processes and wait for them: they run on the process-test pool.
    public static var processes: ProcessTests { ProcessTests() }
}

extension Trait where Self == OwnThread {
    /// The test is mostly suspended: each of its jobs runs on a thread of its own.
    public static var ownThread: OwnThread { OwnThread() }
}
