import Annunciator
import SeededRandom
import Testing

/// Milliseconds → nanoseconds.
func ms(_ x: UInt64) -> UInt64 { x * 1_000_000 }

/// Shorthand for expected changes: (ms, output, on).
func changes(_ list: [(UInt64, AnnunciatorOutput, Bool)]) -> [OutputChange] {
    list.map { OutputChange(time: ms($0.0), output: $0.1, isOn: $0.2) }
}

/// Runs `a` to `limit` stopping at every deadline, collecting the changes.
func drain(_ a: inout Annunciator, until limit: UInt64) -> [OutputChange] {
    var out: [OutputChange] = []
    while let d = a.nextDeadline, d <= limit { out += a.advance(to: d) }
    out += a.advance(to: limit)
    return out
}

@Suite("Annunciator")
struct AnnunciatorTests {
    @Test("a normal alert plays its pattern on buzzer and LED; the badge stays until acknowledged")
    func normalAlert() {
        var a = Annunciator()
        #expect(a.nextDeadline == nil)
        #expect(a.start("n1", pattern: .double, level: .normal, at: ms(1000)) == changes([
            (1000, .badge, true), (1000, .buzzer, true), (1000, .led, true),
        ]))
        #expect(drain(&a, until: ms(5000)) == changes([
            (1200, .buzzer, false), (1200, .led, false),
            (1350, .buzzer, true), (1350, .led, true),
            (1550, .buzzer, false), (1550, .led, false),
        ]))
        #expect(a.nextDeadline == nil)
        #expect(a.isOn(.badge) && a.unacknowledged == ["n1"])
        #expect(a.acknowledge("n1", at: ms(6000)) == changes([(6000, .badge, false)]))
        #expect(a.acknowledge("n1", at: ms(6001)).isEmpty)
    }

    @Test("a step whose outputs switched late is timed from the switch; steps that began earlier keep their schedule")
    func outputsSwitchedLate() {
        var a = Annunciator()
        _ = a.start("n1", pattern: .double, level: .normal, at: ms(1000))
        a.outputsSwitched(at: ms(1120))   // the pins changed 120 ms after the reading
        #expect(a.nextDeadline == ms(1320))
        // A late wake (the first step ended at 1320, the loop runs at 1400): the step that began
        // at 1320 is not moved, the pattern keeps its rhythm.
        #expect(a.advance(to: ms(1400)) == changes([(1320, .buzzer, false), (1320, .led, false)]))
        a.outputsSwitched(at: ms(1401))
        #expect(drain(&a, until: ms(5000)) == changes([
            (1470, .buzzer, true), (1470, .led, true),
            (1670, .buzzer, false), (1670, .led, false),
        ]))
        // Nothing playing: nothing moves.
        a.outputsSwitched(at: ms(6000))
        #expect(a.nextDeadline == nil)
    }

    @Test("ledOnly never touches the buzzer")
    func ledOnly() {
        var a = Annunciator()
        var all = a.start("q", pattern: .chime, level: .ledOnly, at: 0)
        all += drain(&a, until: ms(10_000))
        #expect(!all.contains { $0.output == .buzzer })
        #expect(all.filter { $0.output == .led }.count == 6)   // three on-steps
        #expect(!a.isOn(.led) && a.isOn(.badge))
    }

    @Test("a silent pattern flashes the LED once and stays silent")
    func silentPattern() {
        var a = Annunciator()
        var all = a.start("s", pattern: .none, level: .normal, at: ms(10))
        all += drain(&a, until: ms(5000))
        #expect(all == changes([(10, .badge, true), (10, .led, true), (1010, .led, false)]))
    }

    @Test("overlapping alerts queue: the second pattern starts a gap after the first ends, never interleaved")
    func overlapQueues() {
        var a = Annunciator()
        _ = a.start("a", pattern: .double, level: .normal, at: 0)          // 0 … 550 ms
        #expect(a.start("b", pattern: .default, level: .normal, at: ms(100)).isEmpty)
        #expect(a.playingID == "a")
        #expect(drain(&a, until: ms(3000)) == changes([
            (200, .buzzer, false), (200, .led, false), (350, .buzzer, true), (350, .led, true),
            (550, .buzzer, false), (550, .led, false),
            (1050, .buzzer, true), (1050, .led, true),                       // b after the 500 ms gap
            (1450, .buzzer, false), (1450, .led, false),
        ]))
        #expect(a.unacknowledged == ["a", "b"])
    }

    @Test("an alert without the LED plays the buzzer alone")
    func withoutLED() {
        var a = Annunciator()
        #expect(a.start("n", pattern: .default, level: .normal, usesLED: false, at: 0) == changes([(0, .badge, true), (0, .buzzer, true)]))
        #expect(drain(&a, until: ms(1000)) == changes([(400, .buzzer, false)]))
    }

    @Test("the newest unacknowledged alert is the one started last, whatever its id")
    func newestUnacknowledgedIsByStart() {
        var a = Annunciator()
        _ = a.start("water/10/1", pattern: .none, level: .ledOnly, at: 0)
        _ = a.start("b/1/1", pattern: .none, level: .ledOnly, at: ms(10))
        _ = a.start("water/9/1", pattern: .none, level: .ledOnly, at: ms(20))
        #expect(a.newestUnacknowledged == "water/9/1")
        _ = a.acknowledge("water/9/1", at: ms(30))
        #expect(a.newestUnacknowledged == "b/1/1")
        _ = a.start("water/10/1", pattern: .none, level: .ledOnly, at: ms(40))   // started again: newest
        #expect(a.newestUnacknowledged == "water/10/1")
    }

    @Test("acknowledging the playing alert stops it at once; the next waits the gap")
    func acknowledgeWhilePlaying() {
        var a = Annunciator()
        _ = a.start("a", pattern: .alarm, level: .normal, at: 0)
        _ = a.start("b", pattern: .default, level: .normal, at: ms(10))
        #expect(a.acknowledge("a", at: ms(50)) == changes([(50, .buzzer, false), (50, .led, false)]))
        #expect(a.nextDeadline == ms(550))
        #expect(drain(&a, until: ms(2000)) == changes([
            (550, .buzzer, true), (550, .led, true), (950, .buzzer, false), (950, .led, false),
        ]))
        #expect(a.acknowledge("b", at: ms(2000)) == changes([(2000, .badge, false)]))
        #expect(a.nextDeadline == nil)
    }

    @Test("acknowledging a waiting alert removes its playback")
    func acknowledgeWaiting() {
        var a = Annunciator()
        _ = a.start("a", pattern: .default, level: .normal, at: 0)
        _ = a.start("b", pattern: .default, level: .normal, at: 0)
        #expect(a.acknowledge("b", at: ms(100)).isEmpty)
        #expect(drain(&a, until: ms(5000)) == changes([(400, .buzzer, false), (400, .led, false)]))
    }

    @Test("loud alerts repeat with escalation until acknowledged")
    func loudEscalation() throws {
        var a = Annunciator()
        let beep = try BuzzerPattern(name: "beep", steps: [100])
        var all = a.start("c", pattern: beep, level: .loud, at: 0)
        all += drain(&a, until: ms(145_000))
        let starts = all.filter { $0.output == .buzzer && $0.isOn }.map { $0.time / 1_000_000_000 }
        #expect(starts == [0, 30, 60, 90, 120, 130, 140])
        #expect(a.nextDeadline == ms(150_000))
        #expect(a.acknowledge("c", at: ms(145_000)) == changes([(145_000, .badge, false)]))
        #expect(a.nextDeadline == nil)
    }

    @Test("a loud playback goes ahead of waiting normal ones but does not interrupt the one playing")
    func loudJumpsQueue() throws {
        var a = Annunciator()
        _ = a.start("n1", pattern: .default, level: .normal, at: 0)          // plays 0 … 400
        _ = a.start("n2", pattern: .default, level: .normal, at: ms(10))
        _ = a.start("crit", pattern: .alarm, level: .loud, at: ms(20))
        #expect(a.playingID == "n1")
        _ = a.advance(to: ms(900))
        #expect(a.playingID == "crit")                                        // 900 = 400 + gap
        _ = a.advance(to: ms(900) + ms(BuzzerPattern.alarm.durationMilliseconds) + ms(500))
        #expect(a.playingID == "n2")
    }

    @Test("a loud repeat due while its previous playback still waits is skipped, not queued twice")
    func loudRepeatMerged() throws {
        var a = Annunciator(configuration: .init(loudRepeatIntervals: [ms(100)]))
        let long = try BuzzerPattern(name: "long", steps: [1000])
        _ = a.start("n", pattern: long, level: .normal, at: 0)               // 0 … 1000
        _ = a.start("c", pattern: .default, level: .loud, at: ms(10))        // waits until 1500
        let all = drain(&a, until: ms(1499))
        #expect(all == changes([(1000, .buzzer, false), (1000, .led, false)]))
        #expect(a.advance(to: ms(1500)) == changes([(1500, .buzzer, true), (1500, .led, true)]))
    }

    @Test("starting an active id again replaces it")
    func replaceSameID() {
        var a = Annunciator()
        _ = a.start("x", pattern: .alarm, level: .normal, at: 0)
        let c = a.start("x", pattern: .default, level: .ledOnly, at: ms(50))
        // Old playback stopped; the replacement waits the gap.
        #expect(c == changes([(50, .buzzer, false), (50, .led, false)]))
        #expect(a.unacknowledged == ["x"])
        #expect(drain(&a, until: ms(2000)) == changes([(550, .led, true), (950, .led, false)]))
    }

    @Test("acknowledgeAll and allOff leave every output off")
    func allOffAndAcknowledgeAll() {
        var a = Annunciator()
        _ = a.start("a", pattern: .alarm, level: .loud, at: 0)
        _ = a.start("b", pattern: .chime, level: .normal, at: 0)
        #expect(a.acknowledgeAll(at: ms(10)) == changes([(10, .buzzer, false), (10, .led, false), (10, .badge, false)]))
        #expect(a.nextDeadline == nil)
        #expect(a.start("c", pattern: .alarm, level: .loud, at: ms(20)) == changes([(20, .badge, true)]))
        #expect(a.advance(to: ms(510)) == changes([(510, .buzzer, true), (510, .led, true)]))   // after the gap
        #expect(a.allOff(at: ms(530)) == changes([(530, .buzzer, false), (530, .led, false), (530, .badge, false)]))
        #expect(a.nextDeadline == nil && a.unacknowledged.isEmpty)
    }

    @Test("pattern validation and library lookup")
    func patterns() {
        #expect(throws: BuzzerPatternError.stepOutOfRange(name: "p", index: 1, milliseconds: 0)) {
            try BuzzerPattern(name: "p", steps: [100, 0])
        }
        #expect(throws: BuzzerPatternError.emptyName) { try BuzzerPattern(name: "", steps: [1]) }
        #expect(throws: BuzzerPatternError.tooManySteps(name: "p", count: 65)) {
            try BuzzerPattern(name: "p", steps: Array(repeating: 1, count: 65))
        }
        let custom = try! BuzzerPattern(name: "chime", steps: [50])
        let lib = BuzzerPatternLibrary(custom: [custom])
        #expect(lib.pattern(forSound: "chime", level: .normal) == custom)
        #expect(lib.pattern(forSound: "nope", level: .normal) == .default)
        #expect(lib.pattern(forSound: nil, level: .ledOnly) == .default)
        #expect(lib.pattern(forSound: "chime", level: .loud) == .alarm)
        #expect(lib.names == ["alarm", "chime", "default", "double", "none"])
    }

    /// Random alerts, acknowledgements and advances. Invariants are checked after every call (debug);
    /// the changes must not depend on how often the caller advances: stepping through every deadline
    /// and jumping straight to each operation give the same list.
    @Test("random operations: same changes at any advance granularity", arguments: [UInt64(1), 2, 3, 42])
    func randomGranularity(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let patterns = BuzzerPattern.builtIns + [try BuzzerPattern(name: "x", steps: [30, 30, 30])]
        let config = Annunciator.Configuration(gapBetweenPatterns: ms(200), loudRepeatIntervals: [ms(3000), ms(1000)])
        var fine = Annunciator(configuration: config)
        var coarse = Annunciator(configuration: config)
        var fineChanges: [OutputChange] = []
        var coarseChanges: [OutputChange] = []
        var t: UInt64 = 0
        for step in 0 ..< 400 {
            t += rng.below(ms(1500))
            let id = "a\(rng.below(6))"
            let op = rng.below(10)
            fineChanges += drain(&fine, until: t)
            func apply(_ a: inout Annunciator) -> [OutputChange] {
                switch op {
                case 0 ..< 5:
                    let level: AlertLevel = [.ledOnly, .normal, .normal, .loud][Int(step % 4)]
                    return a.start(id, pattern: patterns[step % patterns.count], level: level, at: t)
                case 5 ..< 9: return a.acknowledge(id, at: t)
                default: return a.acknowledgeAll(at: t)
                }
            }
            fineChanges += apply(&fine)
            coarseChanges += apply(&coarse)
        }
        fineChanges += drain(&fine, until: t + ms(100_000))
        coarseChanges += coarse.advance(to: t + ms(100_000))
        #expect(fineChanges == coarseChanges, "seed \(seed)")
        // Each output alternates on/off, times never decrease.
        var level: [AnnunciatorOutput: Bool] = [:]
        var last: UInt64 = 0
        for c in fineChanges {
            #expect(c.time >= last, "seed \(seed): time went back at \(c)")
            #expect(level[c.output, default: false] != c.isOn, "seed \(seed): repeated level at \(c)")
            level[c.output] = c.isOn
            last = c.time
        }
    }
}
