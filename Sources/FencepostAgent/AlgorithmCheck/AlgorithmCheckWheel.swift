// The timing wheel against a sorted list: random schedules over every level (deadlines from a
// millisecond to years in nanoseconds), cancels, and advances; what fires and in which order.
import SeededRandom
import TimingWheel

enum AlgorithmCheckWheel {
    static func run(seed: UInt64, _ digest: inout AlgorithmCheckDigest) -> Int {
        var random = SplitMix64(seed: seed)
        var wheel = TimingWheel<Int32>()
        // The reference: pending timers as (deadline, schedule order, id).
        var pending: [(deadline: UInt64, order: Int, id: Int32)] = []
        var handles: [Int32: TimerHandle] = [:]
        var now: UInt64 = 0
        var order = 0
        let rounds = 400
        for _ in 0 ..< rounds {
            for _ in 0 ..< random.int(0 ... 40) {
                let scale = random.pick([UInt64(1_000_000), 1 << 30, 1 << 40, 1 << 50])
                let deadline = now + 1 + random.below(scale)
                let id = Int32(order)
                handles[id] = wheel.schedule(at: deadline, id)
                pending.append((deadline, order, id))
                order += 1
            }
            for _ in 0 ..< random.int(0 ... 8) where !pending.isEmpty {
                let victim = pending.remove(at: random.int(0 ... pending.count - 1))
                if let handle = handles.removeValue(forKey: victim.id), wheel.cancel(handle) == victim.id { continue }
                digest.difference("cancel of \(victim.id) found no pending timer")
            }
            let short = random.below(1 << 32), long = random.below(1 << 45)
            now += random.pick([UInt64(0), 1, short, long])
            let fired = wheel.advance(to: now)
            var due = pending.filter { $0.deadline <= now }
            due.sort { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            pending.removeAll { $0.deadline <= now }
            digest.add(UInt64(fired.count))
            for f in fired {
                digest.add(f.deadline)
                digest.add(UInt64(UInt32(bitPattern: f.payload)))
                handles[f.payload] = nil
            }
            if fired.count != due.count || !zip(fired, due).allSatisfy({ $0.payload == $1.id && $0.deadline == $1.deadline }) {
                digest.difference("advance to \(now): \(fired.count) fired, \(due.count) due")
            }
        }
        return rounds
    }
}
