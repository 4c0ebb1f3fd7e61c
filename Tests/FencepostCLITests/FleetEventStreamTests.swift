@testable import fencepost
import FencepostJSON
import SeededRandom
import Testing

/// `fencepost fleet events`' ordering: each event once, in seq order per device.
struct FleetEventStreamTests {
    static func event(_ device: String, _ seq: Int64, type: String = "delivery", extra: String = "") -> ReceivedFleetEvent {
        let text = #"{"v":1,"id":"\#(device).\#(seq)","seq":\#(seq),"type":"\#(type)"\#(extra)}"#
        guard case .success(let e) = ReceivedFleetEvent.parse(device: device, payload: Array(text.utf8)) else { fatalError(text) }
        return e
    }

    static func seqs(_ out: FleetEventStream.Output) -> [String] { out.events.map { "\($0.device):\($0.seq)" } }

    /// Three devices' events, resent in runs (what a reconnect does), and reordered within a few
    /// places: every event once, each device's in seq order, nothing reported missing.
    @Test(arguments: 0 ..< 20 as Range<UInt64>)
    func duplicatesAndLocalReorderingComeOutOnceInOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var perDevice: [[ReceivedFleetEvent]] = []
        var input: [ReceivedFleetEvent] = []
        for device in ["van-a", "van-b", "bus-7"] {
            let base = Int64(rng.below(100))
            var arrivals: [ReceivedFleetEvent] = []
            for seq in base ..< base + 300 {
                let e = Self.event(device, seq)
                input.append(e)
                arrivals.append(e)
                // A resend of the last few (a reconnect).
                if rng.below(20) == 0 {
                    let back = Int64(rng.below(5)) + 1
                    for s in max(base, seq - back) ... seq { arrivals.append(Self.event(device, s)) }
                }
            }
            // Local reordering, never before the device's first event.
            for _ in 0 ..< 40 {
                let i = 1 + Int(rng.below(UInt64(arrivals.count - 2)))
                arrivals.swapAt(i, i + 1)
            }
            perDevice.append(arrivals)
        }
        // The devices interleaved at random, each in its own order.
        var order: [ReceivedFleetEvent] = []
        var next = [0, 0, 0]
        while order.count < perDevice.map(\.count).reduce(0, +) {
            let d = Int(rng.below(3))
            guard next[d] < perDevice[d].count else { continue }
            order.append(perDevice[d][next[d]])
            next[d] += 1
        }
        var stream = FleetEventStream(holdNanoseconds: 1_000_000_000)
        var released: [ReceivedFleetEvent] = []
        var missing = 0
        for (n, e) in order.enumerated() {
            let out = stream.receive(e, now: UInt64(n))
            released += out.events
            missing += out.missing.count
        }
        let end = stream.finish()
        released += end.events
        missing += end.missing.count
        #expect(missing == 0, "seed \(seed)")
        #expect(Set(released.map(\.id)).count == released.count, "duplicates released, seed \(seed)")
        #expect(Set(released.map(\.id)) == Set(input.map(\.id)), "events lost, seed \(seed)")
        for device in ["van-a", "van-b", "bus-7"] {
            let s = released.filter { $0.device == device }.map(\.seq)
            #expect(s == s.sorted(), "\(device) out of order, seed \(seed)")
        }
    }

    @Test func aHoleIsWaitedForThenReported() {
        var stream = FleetEventStream(holdNanoseconds: 100)
        #expect(Self.seqs(stream.receive(Self.event("a", 1), now: 0)) == ["a:1"])
        #expect(Self.seqs(stream.receive(Self.event("a", 3), now: 10)).isEmpty)
        #expect(Self.seqs(stream.receive(Self.event("a", 4), now: 20)).isEmpty)
        #expect(stream.expire(now: 50).events.isEmpty)
        // The hole fills in time.
        #expect(Self.seqs(stream.receive(Self.event("a", 2), now: 60)) == ["a:2", "a:3", "a:4"])
        // Another never does.
        #expect(Self.seqs(stream.receive(Self.event("a", 7), now: 200)).isEmpty)
        let late = stream.expire(now: 300)
        #expect(Self.seqs(late) == ["a:7"])
        #expect(late.missing.map { "\($0.device) \($0.from)-\($0.to)" } == ["a 5-6"])
        // A duplicate is counted, not released.
        #expect(stream.receive(Self.event("a", 3), now: 400).duplicates == 1)
    }

    @Test func aGapEventClosesItsRangeAtOnce() {
        var stream = FleetEventStream()
        _ = stream.receive(Self.event("a", 10), now: 0)
        let out = stream.receive(Self.event("a", 21, type: "gap", extra: #","from":11,"to":20"#), now: 1)
        #expect(Self.seqs(out) == ["a:21"])
        #expect(out.missing.isEmpty)
        #expect(Self.seqs(stream.receive(Self.event("a", 22), now: 2)) == ["a:22"])
    }

    /// A gap row that absorbed later drops before it was sent names a range past its own seq;
    /// survivors inside the range (more important events) wait before it or come after it.
    @Test func aGapWhoseRangePassesItsOwnSeqReleasesTheSurvivorsInOrder() {
        var stream = FleetEventStream()
        for seq in 1 ... 4 { _ = stream.receive(Self.event("a", Int64(seq)), now: 0) }
        // 5 and 6 dropped; 7 and 8 survived and wait for the hole.
        #expect(Self.seqs(stream.receive(Self.event("a", 7), now: 1)).isEmpty)
        #expect(Self.seqs(stream.receive(Self.event("a", 8), now: 2)).isEmpty)
        let out = stream.receive(Self.event("a", 9, type: "gap", extra: #","from":5,"to":30"#), now: 3)
        #expect(Self.seqs(out) == ["a:7", "a:8", "a:9"])
        #expect(out.missing.isEmpty)
        // 10…30 dropped except 25; then the events after the range.
        #expect(Self.seqs(stream.receive(Self.event("a", 25), now: 4)) == ["a:25"])
        #expect(Self.seqs(stream.receive(Self.event("a", 31), now: 5)) == ["a:31"])
        #expect(stream.finish().missing.isEmpty)
    }

    @Test func aPayloadWithoutIdOrSeqIsNamed() {
        guard case .failure(let p) = ReceivedFleetEvent.parse(device: "a", payload: Array(#"{"seq":1}"#.utf8)) else {
            Issue.record("accepted"); return
        }
        #expect(p.message.contains("id"))
        guard case .failure(let q) = ReceivedFleetEvent.parse(device: "a", payload: Array(#"{"id":"x","seq":-1}"#.utf8)) else {
            Issue.record("accepted"); return
        }
        #expect(q.message.contains("seq"))
        guard case .failure(let r) = ReceivedFleetEvent.parse(device: "a", payload: Array("{".utf8)) else {
            Issue.record("accepted"); return
        }
        #expect(r.message.contains("not JSON"))
    }
}

/// Holding many events stays O(log n) per event: 10,000 held behind a hole, then 10,000 more past
/// the holding limit (each gives up on a hole: the lowest held), then expiry and a gap. Counting
/// the held entries looked at (heap inserts and pops, each O(log n), and entries skipped), not
/// time: a bounded count of them per event keeps it logarithmic, where a scan of what is held per
/// event (`held.keys.min()`) is about 10⁸ steps here.
struct FleetEventStreamScaleTests {
    @Test func tenThousandHeldStayLogarithmic() {
        let n: Int64 = 10_000
        var stream = FleetEventStream(holdNanoseconds: 1_000, holdLimit: Int(n), idMemory: 1_000_000)
        var released = 0, missing = 0
        func take(_ out: FleetEventStream.Output) { released += out.events.count; missing += out.missing.count }
        take(stream.receive(FleetEventStreamTests.event("van", 0), now: 0))
        // Every other seq: 2, 4, 6, …, each after a hole of one.
        for k in 1 ... 2 * n { take(stream.receive(FleetEventStreamTests.event("van", 2 * k), now: 1)) }
        #expect(released == 1 + Int(n), "past the limit each event gives up on the lowest hole")
        #expect(missing == Int(n))
        take(stream.expire(now: 10_000))
        #expect(released == 2 + Int(n) && missing == 1 + Int(n), "expiry gives up on one hole")
        take(stream.finish())
        #expect(released == 1 + 2 * Int(n) && missing == 2 * Int(n))
        take(stream.receive(FleetEventStreamTests.event("van", 4 * n + 10, type: "gap", extra: #","from":\#(4 * n + 1),"to":\#(4 * n + 9)"#), now: 20_000))
        #expect(released == 2 + 2 * Int(n))
        // Each held event is inserted once, popped once and skipped at most once in arrival order.
        print("\(stream.heldSteps) heap operations and entries skipped for \(2 * n) held events")
        #expect(stream.heldSteps < 5 * 2 * Int(n), "\(stream.heldSteps) steps for \(2 * n) held events")
    }
}
