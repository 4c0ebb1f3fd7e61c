import FencepostLinux
import Foundation
import Testing

@Suite("thread jobs", .serialized)
struct ThreadJobTests {
    struct Refused: Error, Equatable { var reason: String }

    /// Waits (poll) until `descriptor` is readable; false after `milliseconds`.
    static func readable(_ descriptor: FileDescriptor, within milliseconds: Int32) -> Bool {
        var p = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 1 && p.revents & Int16(POLLIN) != 0
    }

    /// The eventfds this process holds. Other suites run meanwhile and hold a few of their own,
    /// so the checks below compare with a margin far under the count of jobs they make.
    static var eventDescriptors: Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:[eventfd]" }.count
    }

    /// The body runs on another thread, while the caller goes on; its value arrives after the
    /// descriptor turns readable, not before.
    @Test("a job's value arrives through its descriptor, from another thread")
    func valueArrivesAfterTheDescriptorIsReadable() throws {
        var gate: [Int32] = [0, 0]
        #expect(pipe(&gate) == 0)
        defer { close(gate[0]); close(gate[1]) }
        let caller = pthread_self()
        let reader = gate[0]
        let job = try ThreadJob { () throws(Refused) -> (words: [String], sameThread: Bool) in
            var byte: UInt8 = 0
            _ = read(reader, &byte, 1)   // waits for the caller
            return ((0 ..< 1000).map { "w\($0)" }, pthread_equal(pthread_self(), caller) != 0)
        }
        #expect(job.isRunning)
        #expect(!Self.readable(job.descriptor, within: 100), "readable before the body could return")
        var go: UInt8 = 1
        #expect(write(gate[1], &go, 1) == 1)
        #expect(Self.readable(job.descriptor, within: 5_000))
        let value = try job.finish().get()
        #expect(value.words.count == 1000 && value.words.last == "w999")
        #expect(!value.sameThread, "the body ran on the caller's thread")
        #expect(!job.isRunning)
    }

    @Test("a job's typed error comes back as its failure")
    func failureComesBack() throws {
        let job = try ThreadJob { () throws(Refused) -> Int in throw Refused(reason: "line 3: no") }
        #expect(Self.readable(job.descriptor, within: 5_000))
        #expect(job.finish() == .failure(Refused(reason: "line 3: no")))
    }

    /// Jobs let go while their bodies are blocked: the caller does not wait, the threads end
    /// later on their own and close their eventfds then (never a number the caller reused).
    @Test("detached jobs blocked in a read neither hold the caller nor leak their descriptors")
    func detachedJobsEndOnTheirOwn() throws {
        var gate: [Int32] = [0, 0]
        #expect(pipe(&gate) == 0)
        defer { close(gate[0]) }
        let before = Self.eventDescriptors
        let reader = gate[0]
        let jobs = 200
        let ended = UnsafeMutablePointer<Int32>.allocate(capacity: jobs)
        ended.initialize(repeating: 0, count: jobs)
        defer { ended.deallocate() }
        let start = Date()
        for i in 0 ..< jobs {
            let job = try ThreadJob { () throws(Refused) -> Int in
                var byte: UInt8 = 0
                let n = read(reader, &byte, 1)
                ended[i] = 1
                return n
            }
            job.detach()
        }   // each job is gone at once; its thread still reads
        #expect(Date().timeIntervalSince(start) < 5, "detaching waited for the threads")
        #expect(Self.eventDescriptors - before >= jobs - 20, "the blocked threads' eventfds are not open")
        close(gate[1])   // end of file: every body returns
        // Both conditions are waited for: the descriptor count is the process's, and other
        // suites running meanwhile open and close eventfds of their own.
        func allEnded() -> Bool { UnsafeBufferPointer(start: ended, count: jobs).allSatisfy { $0 == 1 } }
        let deadline = Date().addingTimeInterval(10)
        while Self.eventDescriptors - before > 20 || !allEnded(), Date() < deadline { usleep(10_000) }
        #expect(Self.eventDescriptors - before <= 20, "detached threads left their eventfds open")
        #expect(allEnded(), "\(UnsafeBufferPointer(start: ended, count: jobs).filter { $0 == 0 }.count) of \(jobs) bodies did not return after the end of file")
    }

    /// Many jobs one after another, as SIGHUPs come: each thread is joined and each eventfd closed.
    @Test("a thousand jobs in a row leave no descriptor behind")
    func jobsInARowLeakNothing() throws {
        let before = Self.eventDescriptors
        var sum = 0
        for i in 0 ..< 1000 {
            let job = try ThreadJob { () throws(Refused) -> Int in i * 2 }
            #expect(Self.readable(job.descriptor, within: 5_000))
            sum += try job.finish().get()
        }
        #expect(sum == 999 * 1000)
        #expect(Self.eventDescriptors - before <= 20, "eventfds left open: \(Self.eventDescriptors - before)")
    }
}
