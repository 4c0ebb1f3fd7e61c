import CivilTime
import FencepostLinux
import Glibc
import Testing

/// epoll + the two timerfds, with real descriptors and the real clocks. Assertions are about
/// behaviour (fired, not fired, not early), never about how late; timeouts are generous.
@Suite("event loop and timers")
struct EventLoopTests {
    enum Source: EventToken, Equatable {
        case monotonic, wall, pipe(UInt32)
        var epollData: UInt64 {
            switch self {
            case .monotonic: 1
            case .wall: 2
            case .pipe(let n): 1 << 32 | UInt64(n)
            }
        }
        init(epollData: UInt64) {
            switch epollData {
            case 1: self = .monotonic
            case 2: self = .wall
            default: self = .pipe(UInt32(truncatingIfNeeded: epollData))
            }
        }
    }

    static func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Errno.current }
        let p = (read: FileDescriptor(rawValue: fds[0]), write: FileDescriptor(rawValue: fds[1]))
        try p.read.setNonBlocking(true)
        try p.write.setNonBlocking(true)
        return p
    }

    @Test("a pipe becomes readable with its caller's token; nothing is ready on timeout")
    func pipeReadable() throws {
        let loop = try EventLoop<Source>(capacity: 4)
        let p = try Self.makePipe()
        defer { try? p.read.close(); try? p.write.close() }
        try loop.register(p.read, for: .readable, token: .pipe(7))
        #expect(try loop.wait(timeout: .zero).isEmpty)
        #expect(try loop.wait(timeout: .milliseconds(20)).isEmpty)
        _ = try [UInt8](repeating: 65, count: 3).withUnsafeBytes { try p.write.write($0) }
        let events = Array(try loop.wait(timeout: .seconds(5)))
        #expect(events.count == 1)
        #expect(events.first?.token == .pipe(7))
        #expect(events.first?.isReadable == true)
        #expect(events.first?.isWritable == false)
        // Level-triggered: still ready until read.
        #expect(try loop.wait(timeout: .zero).count == 1)
        // Modify to a new token, then unregister: no longer reported.
        try loop.modify(p.read, for: .readable, token: .pipe(8))
        #expect(try loop.wait(timeout: .zero).first?.token == .pipe(8))
        try loop.unregister(p.read)
        #expect(try loop.wait(timeout: .zero).isEmpty)
    }

    @Test("closing the write end reports a hang-up on the read end")
    func pipeHangup() throws {
        let loop = try EventLoop<UInt64>()
        let p = try Self.makePipe()
        defer { try? p.read.close() }
        try loop.register(p.read, for: [.readable], token: 99)
        try p.write.close()
        let events = Array(try loop.wait(timeout: .seconds(5)))
        #expect(events.count == 1)
        #expect(events.first?.token == 99)
        #expect(events.first?.isHangup == true)
    }

    @Test("register twice is EEXIST, unregister of an unknown descriptor is ENOENT")
    func controlErrors() throws {
        let loop = try EventLoop<UInt64>()
        let p = try Self.makePipe()
        defer { try? p.read.close(); try? p.write.close() }
        try loop.register(p.read, for: .readable, token: 1)
        #expect(throws: Errno.exists) { try loop.register(p.read, for: .readable, token: 1) }
        #expect(throws: Errno.noEntry) { try loop.unregister(p.write) }
        #expect(throws: Errno.badFileDescriptor) { try loop.register(FileDescriptor(rawValue: -1), for: .readable, token: 2) }
    }

    @Test("the events of one wait are all reported, more than the capacity over several waits")
    func manyReady() throws {
        let loop = try EventLoop<UInt64>(capacity: 3)
        var pipes: [(read: FileDescriptor, write: FileDescriptor)] = []
        defer { for p in pipes { try? p.read.close(); try? p.write.close() } }
        for i in 0..<7 {
            let p = try Self.makePipe()
            pipes.append(p)
            try loop.register(p.read, for: .readable, token: UInt64(i))
            _ = try [UInt8(i)].withUnsafeBytes { try p.write.write($0) }
        }
        var seen = Set<UInt64>()
        for _ in 0..<7 {
            let events = try loop.wait(timeout: .seconds(5))
            #expect(events.count <= 3)
            for e in events {
                seen.insert(e.token)
                var byte: UInt8 = 0
                _ = try withUnsafeMutableBytes(of: &byte) { try pipes[Int(e.token)].read.read(into: $0) }
                #expect(UInt64(byte) == e.token)
            }
            if seen.count == 7 { break }
        }
        #expect(seen == Set(0..<7))
    }

    @Test("a monotonic timer fires at its deadline through the loop, never before")
    func monotonicFires() throws {
        let loop = try EventLoop<Source>()
        let timer = try MonotonicTimer()
        try loop.register(timer.descriptor, for: .readable, token: .monotonic)
        let start = SystemClocks.boottimeNow()
        let deadline = MonotonicInstant(nanosecondsSinceBoot: start.nanosecondsSinceBoot + 50_000_000)
        try timer.arm(at: deadline)
        #expect(timer.deadline == deadline)
        #expect(try timer.readExpirations() == 0)
        var fired = false
        while !fired {
            let events = try loop.wait(timeout: .seconds(10))
            try #require(!events.isEmpty, "timer did not fire within 10 s")
            for e in events where e.token == .monotonic {
                #expect(try timer.readExpirations() == 1)
                fired = true
            }
        }
        #expect(SystemClocks.boottimeNow() >= deadline)
        #expect(timer.deadline == nil)
        #expect(try timer.readExpirations() == 0)
    }

    @Test("a deadline in the past fires at once; re-arming after expiry fires again")
    func monotonicPastAndRearm() throws {
        let loop = try EventLoop<UInt64>()
        let timer = try MonotonicTimer()
        try loop.register(timer.descriptor, for: .readable, token: 5)
        for round in 0..<3 {
            try timer.arm(at: MonotonicInstant(nanosecondsSinceBoot: UInt64(round)))  // 0 ns too: not "disarm"
            let events = try loop.wait(timeout: .seconds(10))
            #expect(events.first?.token == 5, "round \(round)")
            #expect(try timer.readExpirations() == 1, "round \(round)")
        }
    }

    @Test("disarm stops a timer that would fire, and clears an expiry not yet read")
    func monotonicDisarm() throws {
        let loop = try EventLoop<UInt64>()
        let timer = try MonotonicTimer()
        try loop.register(timer.descriptor, for: .readable, token: 1)
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        try timer.arm(at: MonotonicInstant(nanosecondsSinceBoot: now + 30_000_000))
        try timer.disarm()
        #expect(timer.deadline == nil)
        #expect(try loop.wait(timeout: .milliseconds(300)).isEmpty)
        #expect(try timer.readExpirations() == 0)
        // Expired but unread, then disarmed: the expiry is gone.
        try timer.arm(at: MonotonicInstant(nanosecondsSinceBoot: 1))
        #expect(try loop.wait(timeout: .seconds(10)).count == 1)
        try timer.disarm()
        #expect(try loop.wait(timeout: .zero).isEmpty)
        #expect(try timer.readExpirations() == 0)
    }

    @Test("moving a deadline later re-arms; the same deadline is cached")
    func monotonicMoveLater() throws {
        let loop = try EventLoop<UInt64>()
        let timer = try MonotonicTimer()
        try loop.register(timer.descriptor, for: .readable, token: 1)
        let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
        try timer.arm(at: MonotonicInstant(nanosecondsSinceBoot: now + 20_000_000))
        let later = MonotonicInstant(nanosecondsSinceBoot: now + 3_600_000_000_000)
        try timer.arm(at: later)
        try timer.arm(at: later)
        #expect(timer.deadline == later)
        #expect(try loop.wait(timeout: .milliseconds(300)).isEmpty)
    }

    @Test("a wall-clock timer far in the future does not fire; one in the past fires at once")
    func wallClockTimer() throws {
        let loop = try EventLoop<Source>()
        let timer = try WallClockTimer()
        try loop.register(timer.descriptor, for: .readable, token: .wall)
        let now = SystemClocks.realtimeNow()
        #expect(now.seconds > 1_600_000_000)
        #expect((0..<1_000_000_000).contains(now.nanoseconds))
        let farFuture = WallInstant(secondsSinceEpoch: now.seconds + 100 * 365 * 86_400)
        try timer.arm(at: farFuture)
        #expect(timer.deadline == RealtimeInstant(seconds: farFuture.secondsSinceEpoch, nanoseconds: 0))
        #expect(try loop.wait(timeout: .milliseconds(200)).isEmpty)
        #expect(try timer.read() == nil)
        // A second ago: expired at once.
        try timer.arm(at: RealtimeInstant(seconds: now.seconds - 1, nanoseconds: now.nanoseconds))
        let events = Array(try loop.wait(timeout: .seconds(10)))
        #expect(events.map(\.token) == [.wall])
        #expect(try timer.read() == .expired(1))
        #expect(timer.deadline == nil)
        // Shortly ahead: fires, not before its deadline.
        let soon = SystemClocks.realtimeNow()
        let deadline = RealtimeInstant(seconds: soon.seconds + (soon.nanoseconds >= 950_000_000 ? 1 : 0),
                                       nanoseconds: (soon.nanoseconds + 50_000_000) % 1_000_000_000)
        try timer.arm(at: deadline)
        #expect(try loop.wait(timeout: .seconds(10)).count == 1)
        let after = SystemClocks.realtimeNow()
        #expect((after.seconds, after.nanoseconds) >= (deadline.seconds, deadline.nanoseconds))
        #expect(try timer.read() == .expired(1))
        try timer.arm(at: farFuture)
        try timer.disarm()
        #expect(try timer.read() == nil)
    }

    @Test("timeouts round up to whole milliseconds")
    func timeoutRounding() throws {
        let loop = try EventLoop<UInt64>()
        let start = SystemClocks.boottimeNow().nanosecondsSinceBoot
        #expect(try loop.wait(timeout: .microseconds(1500)).isEmpty)
        #expect(SystemClocks.boottimeNow().nanosecondsSinceBoot - start >= 1_500_000)
    }
}
