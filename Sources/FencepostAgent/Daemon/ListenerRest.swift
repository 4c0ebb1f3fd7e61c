// The control socket's listener when accept fails: it rests rather than spin on an error that
// the next turn would meet again.
import FencepostLinux

/// The listener's rest while accept fails (out of descriptors, or another failure): it is not
/// watched for 100 ms, doubling to 2 s, and the failure is logged as a repeating condition.
struct ListenerRest {
    /// Until when the listener is not watched; nil while it is.
    private(set) var pausedUntil: UInt64?
    private var backoff = ReconnectBackoff(initial: 100_000_000, maximum: 2_000_000_000)
    private var failures = RepeatLimiter()

    mutating func pause(_ listener: UnixListener, loop: EventLoop<DaemonToken>, log: DaemonLog, now: UInt64, because reason: String) {
        let rest = backoff.nextDelay()
        pausedUntil = now + rest
        try? loop.modify(listener.descriptor, for: [], token: .listener)
        log.repeating(.warning, "control: accept failed (\(reason)); not accepting for \(rest / 1_000_000) ms at a time",
                      limiter: &failures, at: now)
    }

    /// Accept succeeded (`connection`: and gave one, which ends a logged failure).
    mutating func accepted(log: DaemonLog, now: UInt64, connection: Bool) {
        backoff.reset()
        if connection { log.cleared("control: accepting connections again", limiter: &failures, at: now) }
    }

    mutating func resumeIfOver(_ listener: UnixListener, loop: EventLoop<DaemonToken>, now: UInt64) {
        guard let p = pausedUntil, p <= now else { return }
        pausedUntil = nil
        try? loop.modify(listener.descriptor, for: .readable, token: .listener)
    }
}
