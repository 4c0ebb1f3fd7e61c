@testable import FencepostAgent
import SeededRandom
import Testing

/// GNSS time anchored to CLOCK_BOOTTIME, against a simulated receiver: fixes stamped with true
/// GNSS time arrive with a random latency, the boot clock runs fast by a few ppm.
@Suite struct GNSSClockTests {
    /// Readings stay within 1 s of true time (in fact within the least latency plus the drift of
    /// a minute), never go back, and a 2-day run with 50 ppm drift needs no step.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func followsTrueTimeThroughLatencyAndDrift(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var clock = GNSSClock()
        let t0: Int64 = 1_795_000_000 * 1_000_000_000   // true GNSS time at boot 0, ns
        let ppm = Double(random.next() % 101) - 50.0        // boot clock rate error, −50 … +50 ppm
        var lastReading: Int64 = .min
        var worst: Int64 = 0
        for second in 0 ..< 2 * 86_400 {
            let truth = t0 + Int64(second) * 1_000_000_000
            let latency = Int64(20_000_000 + random.next() % 400_000_000)   // 20 … 420 ms
            // Boot time at which the fix arrives: true elapsed time scaled by the rate error.
            let elapsed = Double(Int64(second) * 1_000_000_000 + latency)
            let boot = UInt64(elapsed * (1 + ppm / 1e6))
            let effect = clock.take(seconds: truth / 1_000_000_000, nanoseconds: 0, arrival: boot)
            #expect(second == 0 ? effect == .first : effect == .refined, "seed \(seed) at \(second) s: \(effect)")
            let reading = clock.wallNanoseconds(at: boot)!
            #expect(reading >= lastReading, "seed \(seed): went back at \(second) s")
            lastReading = reading
            worst = max(worst, abs(reading - (truth + latency)))
        }
        #expect(worst < 1_000_000_000, "seed \(seed), \(ppm) ppm: worst error \(worst) ns")
    }

    /// The receiver's time jumping back (a replay restarted, a receiver reset) is a step: taken at
    /// once and reported; a jump forward too.
    @Test func jumpsAreSteps() {
        var clock = GNSSClock()
        #expect(clock.take(seconds: 2_000_000_000, nanoseconds: 0, arrival: 1_000_000_000) == .first)
        #expect(clock.take(seconds: 2_000_000_001, nanoseconds: 0, arrival: 2_000_000_000) == .refined)
        #expect(clock.take(seconds: 1_999_999_000, nanoseconds: 0, arrival: 3_000_000_000) == .stepped(-1_002_000_000_000))
        let afterStep = clock.wallNanoseconds(at: 3_000_000_000)
        #expect(afterStep == Int64(1_999_999_000) * 1_000_000_000, "\(String(describing: afterStep))")
        #expect(clock.take(seconds: 2_100_000_000, nanoseconds: 0, arrival: 4_000_000_000) != .refined)
        // The boot time of a wall deadline: where the monotonic timer is armed.
        #expect(clock.bootTime(atWall: .init(secondsSinceEpoch: 2_100_000_010)) == 14_000_000_000)
    }
}
