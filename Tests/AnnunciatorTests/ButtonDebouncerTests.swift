import Annunciator
import SeededRandom
import Testing

@Suite("ButtonDebouncer")
struct ButtonDebouncerTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Raw edges: (ms, pressed).
        var edges: [(UInt64, Bool)]
        /// Advance to this time (ms) at the end.
        var end: UInt64
        /// Expected events: (ms, long?).
        var expected: [(UInt64, Bool)]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "clean short press", edges: [(100, true), (300, false)], end: 2000, expected: [(330, false)]),
        Case(name: "clean long press fires at the threshold while held",
             edges: [(100, true), (3000, false)], end: 5000, expected: [(1100, true)]),
        Case(name: "long press still held at the end", edges: [(100, true)], end: 1100, expected: [(1100, true)]),
        Case(name: "released so that it settles just before the threshold: short",
             edges: [(100, true), (1069, false)], end: 2000, expected: [(1099, false)]),
        Case(name: "released so that it settles just after the threshold: long",
             edges: [(100, true), (1071, false)], end: 2000, expected: [(1100, true)]),
        Case(name: "bounce train on press and on release",
             edges: [(100, true), (101, false), (103, true), (104, false), (106, true),
                     (400, false), (402, true), (405, false)],
             end: 2000, expected: [(435, false)]),
        Case(name: "long press measured from the last bounce",
             edges: [(0, true), (2, false), (20, true), (1500, false)], end: 3000, expected: [(1020, true)]),
        Case(name: "spike shorter than the debounce is ignored", edges: [(100, true), (120, false)], end: 2000,
             expected: []),
        Case(name: "spike of exactly the debounce counts", edges: [(100, true), (130, false)], end: 2000,
             expected: [(160, false)]),
        Case(name: "release glitch during a press does not split it",
             edges: [(100, true), (500, false), (510, true), (700, false)], end: 2000, expected: [(730, false)]),
        Case(name: "release starting just before the threshold: the long press wins",
             edges: [(0, true), (990, false)], end: 2000, expected: [(1000, true)]),
        Case(name: "release settling exactly at the threshold: the long press wins",
             edges: [(0, true), (970, false)], end: 2000, expected: [(1000, true)]),
        Case(name: "duplicate edges change nothing",
             edges: [(100, true), (110, true), (300, false), (305, false)], end: 2000, expected: [(330, false)]),
        Case(name: "two presses", edges: [(100, true), (200, false), (400, true), (1600, false)], end: 3000,
             expected: [(230, false), (1400, true)]),
    ]

    @Test("table", arguments: cases)
    func table(_ c: Case) {
        // Once advancing only when edges arrive, once also at every deadline: same events.
        for stepThroughDeadlines in [false, true] {
            var d = ButtonDebouncer()
            var events: [ButtonEvent] = []
            for (t, pressed) in c.edges {
                if stepThroughDeadlines {
                    while let dl = d.nextDeadline, dl <= ms(t) { events += d.advance(to: dl) }
                }
                events += d.edge(pressed: pressed, at: ms(t))
            }
            events += d.advance(to: ms(c.end))
            #expect(events == c.expected.map { ButtonEvent($0.1 ? .longPress : .shortPress, at: ms($0.0)) },
                    "\(c.name), stepping: \(stepThroughDeadlines)")
        }
    }

    @Test("a button held at start is not a press")
    func heldAtStart() {
        var d = ButtonDebouncer(initiallyPressed: true, at: 0)
        #expect(d.advance(to: ms(5000)).isEmpty)
        #expect(d.edge(pressed: false, at: ms(6000)).isEmpty)
        #expect(d.advance(to: ms(7000)).isEmpty)
        #expect(d.edge(pressed: true, at: ms(8000)).isEmpty)
        #expect(d.edge(pressed: false, at: ms(8100)).isEmpty)
        #expect(d.advance(to: ms(9000)) == [ButtonEvent(.shortPress, at: ms(8130))])
    }

    /// New timings while a press is held: its long press comes at the new threshold from the
    /// press's edge, and the next press settles after the new debounce.
    @Test("new timings hold for the press under way")
    func reconfigureDuringAPress() {
        var d = ButtonDebouncer()
        _ = d.edge(pressed: true, at: ms(0))
        #expect(d.advance(to: ms(100)).isEmpty)       // pressed since 0 (settled at 30 ms)
        d.reconfigure(.init(debounce: 50_000_000, longPress: 400_000_000))
        #expect(d.nextDeadline == ms(400))
        #expect(d.advance(to: ms(500)) == [ButtonEvent(.longPress, at: ms(400))])
        _ = d.edge(pressed: false, at: ms(600))
        #expect(d.nextDeadline == ms(650))
    }

    @Test("an edge older than the latest time is taken at that time")
    func lateEdge() {
        var d = ButtonDebouncer()
        _ = d.advance(to: ms(100))
        _ = d.edge(pressed: true, at: ms(50))
        #expect(d.nextDeadline == ms(130))
    }

    /// Presses of random lengths, each edge followed by a random bounce train (bounces closer than
    /// the debounce time). Exactly one event per press, of the right kind and time.
    @Test("seeded random bounce sweep", arguments: [UInt64(7), 8, 9, 10, 11])
    func randomBounces(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var d = ButtonDebouncer()
        var t: UInt64 = ms(100)
        var expected: [ButtonEvent] = []
        var events: [ButtonEvent] = []
        let debounce = ms(30)
        /// Feeds a transition to `pressed` with bounces; returns the time of its last edge.
        func transition(to pressed: Bool) -> UInt64 {
            events += d.edge(pressed: pressed, at: t)
            let bounces = rng.below(6)
            for _ in 0 ..< bounces {
                t += 100_000 + rng.below(debounce - 200_000)   // 0.1 … 29.9 ms apart
                events += d.edge(pressed: !pressed, at: t)
                t += 100_000 + rng.below(debounce - 200_000)
                events += d.edge(pressed: pressed, at: t)
            }
            return t
        }
        for _ in 0 ..< 300 {
            let long = rng.below(2) == 0
            let pressedAt = transition(to: true)
            // Held time, kept 100 ms away from the threshold (bounce trains are < 400 ms).
            t += long ? ms(1100) + rng.below(ms(2000)) : ms(40) + rng.below(ms(500))   // + release train ≤ 360 ms: settles before 1 s
            if rng.below(3) == 0, let dl = d.nextDeadline, dl <= t { events += d.advance(to: dl) }
            let releasedAt = transition(to: false)
            expected.append(long ? ButtonEvent(.longPress, at: pressedAt + ms(1000))
                                 : ButtonEvent(.shortPress, at: releasedAt + debounce))
            t += ms(50) + rng.below(ms(2000))
        }
        events += d.advance(to: t + ms(5000))
        #expect(events == expected, "seed \(seed)")
        #expect(!d.isPressed)
    }
}
