import FencepostLinux
import Glibc
import Testing

/// signalfd with a real signal. The signal is sent to this thread with `pthread_kill` rather than
/// to the process with `kill(getpid())`: the mask is per thread, and swift-testing runs other
/// threads that do not block SIGUSR1, so a process-directed SIGUSR1 could be delivered to one of
/// them (default action: terminate). A thread-directed signal is queued for this thread, which
/// blocks it, and signalfd reads signals pending for the thread as well as for the process.
/// (In the daemon the receiver is created before any thread, so `kill` works there.)
@Suite("signal receiver")
struct SignalReceiverTests {
    @Test("SIGUSR1 sent to the blocked thread arrives through the signalfd and the event loop")
    func receivesSIGUSR1() throws {
        let receiver = try SignalReceiver(additional: [SIGUSR1])
        #expect(receiver.signals == [SIGTERM, SIGINT, SIGHUP, SIGUSR1])
        #expect(try receiver.receive() == nil)
        let loop = try EventLoop<UInt64>()
        try loop.register(receiver.descriptor, for: .readable, token: 42)
        #expect(try loop.wait(timeout: .zero).isEmpty)

        #expect(pthread_kill(pthread_self(), SIGUSR1) == 0)
        let events = Array(try loop.wait(timeout: .seconds(10)))
        #expect(events.map(\.token) == [42])
        let signal = try #require(try receiver.receive())
        #expect(signal.number == SIGUSR1)
        #expect(signal.senderPID == getpid())
        #expect(signal.senderUID == getuid())
        #expect(try receiver.receive() == nil)
    }

    @Test("two different signals are both received, each once")
    func twoSignals() throws {
        let receiver = try SignalReceiver(additional: [SIGUSR2, SIGUSR1])
        #expect(pthread_kill(pthread_self(), SIGUSR2) == 0)
        #expect(pthread_kill(pthread_self(), SIGUSR1) == 0)
        var got: Set<Int32> = []
        while let s = try receiver.receive() { got.insert(s.number) }
        #expect(got == [SIGUSR1, SIGUSR2])
    }
}
