// The daemon's wall clock and its trust (`clock_trust`): the clock reading the engine gets, GNSS
// time anchored to CLOCK_BOOTTIME when the configuration says so, and when the loop must look at
// the clock again because nothing will wake it (an NTP slew, a GNSS-timed calendar fire).
import CivilTime
import FencepostLinux
import LocalNotifications
import Position

/// The wall clock the engine reads, and whether it is trusted.
struct WallClockTrust {
    /// GNSS time anchored to CLOCK_BOOTTIME: the wall clock when `clock_trust = "gnss"`.
    var gnss = GNSSClock()
    /// GNSS times too early to be true, logged as one repeating condition.
    var implausibleGNSSTime = RepeatLimiter()
    /// While `clock_trust = "ntp"` waits for synchronisation: when to read the clock's state again.
    var nextTrustCheck: UInt64?

    /// The engine's clock reading now.
    mutating func clock(_ trust: ClockTrust) -> EngineClock { Self.read(trust, gnss: &gnss) }

    /// Whether the engine's wall time is GNSS time now (`clock_trust = "gnss"` and a fix gave one).
    func isGNSS(_ trust: ClockTrust) -> Bool { trust == .gnss && gnss.offset != nil }

    /// The engine's clock reading. `always`: the system clock, trusted; `ntp`: the system clock,
    /// trusted while the kernel says NTP synchronised it; `gnss`: GNSS time anchored to
    /// CLOCK_BOOTTIME once a fix gave one (GNSSClock.swift), before that the system clock as for `ntp`.
    static func read(_ trust: ClockTrust, gnss: inout GNSSClock) -> EngineClock {
        let boot = SystemClocks.boottimeNow()
        let trusted: Bool
        switch trust {
        case .always: trusted = true
        case .ntp: trusted = SystemClocks.isWallClockSynchronized()
        case .gnss:
            if let ns = gnss.wallNanoseconds(at: boot.nanosecondsSinceBoot) {
                return EngineClock(wall: WallInstant(secondsSinceEpoch: Self.floorSeconds(ns)), wallTrusted: true, monotonic: boot)
            }
            trusted = SystemClocks.isWallClockSynchronized()
        }
        return EngineClock(wall: SystemClocks.wallNow(), wallTrusted: trusted, monotonic: boot)
    }

    /// Whole seconds of `ns` nanoseconds since the epoch, rounded down (before 1970 too).
    static func floorSeconds(_ ns: Int64) -> Int64 {
        let s = ns / 1_000_000_000
        return ns < 0 && s * 1_000_000_000 != ns ? s - 1 : s
    }

    /// Takes the GNSS times of `fix` (arrived at boot time `arrival`) into the GNSS clock, when it
    /// is the wall clock (`clock_trust = "gnss"`). A time before `minimumTrustedWall` (a receiver
    /// still on its default date) is not taken; said once.
    mutating func take(_ fix: Fix, arrival: UInt64, trust: ClockTrust, minimumTrustedWall: WallInstant, log: DaemonLog) {
        guard trust == .gnss, let t = fix.time, fix.isValid, fix.mode >= .twoD else { return }
        guard t >= minimumTrustedWall else {
            log.repeating(.warning, "GNSS time \(t) is before \(minimumTrustedWall): not used as the wall clock",
                          limiter: &implausibleGNSSTime, at: arrival)
            return
        }
        let system = SystemClocks.realtimeNow()
        switch gnss.take(seconds: t.secondsSinceEpoch, nanoseconds: fix.nanoseconds, arrival: arrival) {
        case .first:
            log.info("wall clock: GNSS time \(t) (the system clock is \(Self.seconds(t, minus: system)) s behind it)")
        case .stepped(let ns):
            log.warning("wall clock: GNSS time stepped by \(Self.milliseconds(ns)) s against CLOCK_BOOTTIME (fix \(t))")
        case .refined:
            break
        }
    }

    /// The boot time at which the loop must look at the clock although no timer of its own is
    /// due: a calendar fire at `nextWallWake` on GNSS time (the wall timer runs on the system
    /// clock), or, while calendar triggers wait for NTP, every 30 s (nothing signals that NTP has
    /// synchronised the clock: a step wakes the wall timer, a slew does not).
    mutating func deadline(trust: ClockTrust, wallTrusted: Bool, nextWallWake: WallInstant?) -> UInt64? {
        if trust == .ntp, !wallTrusted {
            let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
            if (nextTrustCheck ?? 0) <= now { nextTrustCheck = now + 30_000_000_000 }
            return nextTrustCheck
        }
        nextTrustCheck = nil
        if isGNSS(trust), let w = nextWallWake { return gnss.bootTime(atWall: w) }
        return nil
    }

    /// GNSS time minus the system clock, seconds (nil unless the wall clock is GNSS time).
    mutating func offsetToSystem(_ trust: ClockTrust) -> Double? {
        guard isGNSS(trust) else { return nil }
        let boot = SystemClocks.boottimeNow().nanosecondsSinceBoot
        let system = SystemClocks.realtimeNow()
        guard let g = gnss.wallNanoseconds(at: boot) else { return nil }
        let s = SaturatingTime.add(SaturatingTime.multiply(system.seconds, 1_000_000_000), Int64(system.nanoseconds))
        return Double(SaturatingTime.subtract(g, s)) / 1e9
    }

    /// `a − b` in seconds with millisecond precision, as text (no Double formatting in Embedded Swift).
    static func seconds(_ a: WallInstant, minus b: RealtimeInstant) -> String {
        milliseconds(SaturatingTime.subtract(SaturatingTime.multiply(a.secondsSinceEpoch - b.seconds, 1_000_000_000), Int64(b.nanoseconds)))
    }

    /// Nanoseconds as seconds with three decimals ("-1.250").
    static func milliseconds(_ ns: Int64) -> String {
        let ms = ns / 1_000_000
        let whole = ms / 1000, part = (ms < 0 ? -ms : ms) % 1000
        let sign = ms < 0 && whole == 0 ? "-" : ""
        let digits = String(part)
        return sign + String(whole) + "." + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
