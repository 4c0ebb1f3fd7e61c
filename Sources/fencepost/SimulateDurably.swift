// `fencepost simulate --state FILE`: the engine over its SQLite state, stepping through virtual
// time as the daemon steps through real time — commit, then print. Killed at any instant and run
// again with the same arguments, it continues from its last commit (after --resume-gap seconds of
// virtual downtime), which is how the crash-safety test drives it.
import CivilTime
import FencepostAgent
import FencepostJSON
import FencepostLinux
import LocalNotifications

extension SimulateCommand {
    static let nowKey = "simulate.now"

    func simulateDurably(state: String, engine: NotificationEngine, lines: [SimulationInput],
                         start: WallInstant, end: WallInstant) throws(ReplayFailure) {
        let endNs = end.secondsSinceEpoch * 1_000_000_000
        var now: Int64 = 0, boot: Int64 = 0
        var resumed = false
        func clock(_ t: Int64) -> EngineClock {
            EngineClock(wall: WallInstant(secondsSinceEpoch: t / 1_000_000_000), wallTrusted: true,
                        monotonic: MonotonicInstant(nanosecondsSinceBoot: UInt64(t - boot)))
        }
        let center: DurableNotificationCenter
        do throws(StoreError) {
            center = try DurableNotificationCenter(path: state, engine: engine, clock: { meta in
                if let s = meta[Self.nowKey], let t = Int64(s) {
                    resumed = true
                    now = min(SaturatingTime.add(t, SaturatingTime.multiply(resumeGap, 1_000_000_000)), max(t, endNs))
                } else {
                    now = start.secondsSinceEpoch * 1_000_000_000
                }
                boot = now            // every start is a boot: the monotonic clock starts at zero
                return clock(now)
            })
        } catch {
            throw ReplayFailure(66, "\(error)")
        }
        var out = BufferedWriter(fd: .standardOutput)
        func emit(_ o: EngineOutput, at t: Int64) throws(ReplayFailure) {
            for e in SimulationEvent.events(of: o, time: t / 1_000_000_000, wall: WallInstant(secondsSinceEpoch: t / 1_000_000_000)) {
                if jsonl { e.jsonLine.serialize(into: &out.buffer) } else { out.buffer.append(contentsOf: Array(e.humanLine.utf8)) }
                out.buffer.append(0x0A)
            }
            // Flushed at each step: what is printed has been committed.
            do throws(Errno) { try out.flush() } catch { throw ReplayFailure(74, "cannot write standard output: \(error)") }
        }
        func step(_ t: Int64, _ operation: (inout NotificationEngine) throws(RequestError) -> EngineOutput) throws(ReplayFailure) {
            let o: EngineOutput
            do throws(CenterError) {
                o = try center.perform(meta: [(Self.nowKey, "\(t)")], operation)
            } catch {
                switch error {
                case .request(let e): throw ReplayFailure(65, "\(requests): \(e.message) [rule: \(e.rule.rawValue)]")
                case .store(let e): throw ReplayFailure(74, "\(e)")
                }
            }
            try emit(o, at: t)
        }
        try emit(center.restoreOutput, at: now)
        if !resumed {
            // All requests and the start time in one transaction: a run killed here starts afresh.
            let c = clock(now)
            let o: EngineOutput
            do throws(CenterError) {
                o = try center.perform(meta: [(Self.nowKey, "\(now)")]) { (e: inout NotificationEngine) throws(RequestError) -> EngineOutput in
                    var all = EngineOutput()
                    for line in lines {
                        switch line.item {
                        case .categories(let list): all.append(try e.setCategories(list))
                        case .request(let r): all.append(try e.add(r, clock: c))
                        }
                    }
                    return all
                }
            } catch {
                throw ReplayFailure(65, "\(requests): \(error)")
            }
            try emit(o, at: now)
        }
        var lastWake: Int64? = nil
        while let t = Simulation.nextStep(of: center.engine, wallOffset: 0, bootTime: boot, now: now, lastWake: lastWake, end: endNs) {
            now = t
            lastWake = t
            let c = clock(now)
            try step(now) { (e: inout NotificationEngine) throws(RequestError) in e.advance(clock: c) }
        }
        now = max(now, endNs)
        let c = clock(now)
        repeat {
            try step(now) { (e: inout NotificationEngine) throws(RequestError) in e.advance(clock: c) }
        } while center.engine.hasDeferredFires
    }
}
