// `fencepost fleet events`: the devices' events as a consumer wants them, each once and in `seq`
// order per device, out of what the broker hands over (duplicates after a resend, a consumer that
// joins in the middle, announced gaps).
import FencepostJSON
import HeapModule
import RecentIDs

/// One event of a device's `evt` topic.
struct ReceivedFleetEvent: Equatable {
    var device: String
    var id: String
    var seq: Int64
    /// The payload as it came (an object with at least `id`, `seq` and `type`).
    var payload: JSONValue

    var type: String { payload["type"]?.string ?? "" }

    /// Reads an `evt` payload of `device`; nil with the reason when it lacks `id` or `seq`.
    static func parse(device: String, payload: [UInt8]) -> Result<ReceivedFleetEvent, FleetEventProblem> {
        let value: JSONValue
        do { value = try JSONValue.parse(String(decoding: payload, as: UTF8.self)) } catch {
            return .failure(FleetEventProblem(device: device, message: "not JSON: \(error)"))
        }
        guard let id = value["id"]?.string, !id.isEmpty else {
            return .failure(FleetEventProblem(device: device, message: "an event without an \"id\""))
        }
        guard let seq = value["seq"]?.int64, seq >= 0 else {
            return .failure(FleetEventProblem(device: device, message: "event \(id) has no \"seq\" (a whole number ≥ 0)"))
        }
        return .success(ReceivedFleetEvent(device: device, id: id, seq: seq, payload: value))
    }
}

struct FleetEventProblem: Error, Equatable {
    var device: String
    var message: String
}

/// Drops duplicates by `id` and puts each device's events in `seq` order.
///
/// An event whose `seq` is the next one of its device is released at once, with the held events
/// that follow it. An event after a hole is held until the hole fills, or until it has waited
/// `holdNanoseconds` or `holdLimit` events of that device are held: then the held events are
/// released and the hole is reported (``Output/missing``). A `gap` event (the board's outbox was
/// full and it dropped `from`…`to`) closes its range at once: those seqs never come (the ones
/// between that survived, held or still to come, are released; a gap row the board has not sent
/// yet absorbs later drops, so `to` may pass the gap's own seq). The first
/// event of a device sets where it starts (a consumer may join in the middle); an event older than
/// what was released (a resend to an earlier session) is released as it comes.
///
/// - Complexity: O(log n) amortized per event for n held (a min-heap of the held seqs, each insert
///   and pop O(log n); and the held in arrival order for expiry; entries already released are
///   skipped when they reach the front); `expire` is O(devices) plus what it releases. The ids
///   remembered are bounded (`idMemory`, the oldest forgotten first), so a duplicate older than
///   that is released again.
struct FleetEventStream {
    struct Output: Equatable {
        var events: [ReceivedFleetEvent] = []
        /// Holes given up on: device, first and last seq missing.
        var missing: [(device: String, from: Int64, to: Int64)] = []
        var duplicates = 0

        static func == (a: Output, b: Output) -> Bool {
            a.events == b.events && a.duplicates == b.duplicates
                && a.missing.map { "\($0.device) \($0.from) \($0.to)" } == b.missing.map { "\($0.device) \($0.from) \($0.to)" }
        }
    }

    private struct Held {
        var event: ReceivedFleetEvent
        var since: UInt64
    }

    private struct Device {
        /// The last seq released (nil before the first event).
        var last: Int64?
        /// Held events by seq.
        var held: [Int64: Held] = [:]
        /// The held seqs, lowest first. Held events leave only from the bottom (the next seq, a
        /// gap's range, a hole given up on), so a seq no longer in `held` is dropped when it
        /// reaches the top.
        var lowest = Heap<Int64>()
        /// The held seqs in arrival order (`since` never decreases along it), from `oldest`: the
        /// first still held with that `since` is the longest waiting.
        var arrivals: [(seq: Int64, since: UInt64)] = []
        var oldest = 0
    }

    let holdNanoseconds: UInt64
    let holdLimit: Int
    let idMemory: Int
    private var devices: [String: Device] = [:]
    private var seen: RecentMemory<String, Void>
    private(set) var duplicates = 0
    /// Held entries looked at: heap inserts and pops (each O(log n)) and entries skipped (what a
    /// test bounds).
    private(set) var heldSteps = 0

    init(holdNanoseconds: UInt64 = 5_000_000_000, holdLimit: Int = 10_000, idMemory: Int = 1_000_000) {
        self.holdNanoseconds = holdNanoseconds
        self.holdLimit = max(1, holdLimit)
        self.idMemory = max(1, idMemory)
        seen = RecentMemory(capacity: self.idMemory)
    }

    /// Takes one event at `now` (monotonic nanoseconds); what can be released now.
    mutating func receive(_ event: ReceivedFleetEvent, now: UInt64) -> Output {
        var out = Output()
        guard remember(event.id) else {
            duplicates += 1
            out.duplicates = 1
            return out
        }
        // Taken out while it changes: a copy left in `devices` would make the first change copy
        // every held event.
        var device = devices.removeValue(forKey: event.device) ?? Device()
        defer { devices[event.device] = device }
        if event.type == "gap", let from = event.payload["from"]?.int64, let to = event.payload["to"]?.int64, from <= to,
           let last = device.last, last + 1 >= from, last < to {
            // The dropped range will never come: skip past it. Events of the range that survived
            // the drop and wait here go out now, in seq order; later ones as they come.
            while let seq = lowestHeld(&device), seq <= to {
                popLowest(&device)
                if let held = device.held.removeValue(forKey: seq) { out.events.append(held.event) }
            }
            device.last = to
        }
        guard let last = device.last else {
            device.last = event.seq
            out.events.append(event)
            release(&device, into: &out)
            return out
        }
        if event.seq <= last || event.seq == last + 1 {
            out.events.append(event)
            device.last = max(last, event.seq)
            release(&device, into: &out)
        } else {
            if device.held.updateValue(Held(event: event, since: now), forKey: event.seq) == nil { push(event.seq, onto: &device) }
            device.arrivals.append((event.seq, now))
            if device.arrivals.count - device.oldest > 4 * device.held.count + 1024 { compactArrivals(&device) }
            if device.held.count > holdLimit { giveUp(&device, name: event.device, into: &out) }
        }
        return out
    }

    /// Releases what has waited too long at `now`, reporting the holes before it.
    mutating func expire(now: UInt64) -> Output {
        var out = Output()
        for name in devices.keys.sorted() {
            guard var device = devices.removeValue(forKey: name) else { continue }
            if let since = longestWaiting(&device), now &- since >= holdNanoseconds {
                giveUp(&device, name: name, into: &out)
            }
            devices[name] = device
        }
        return out
    }

    /// Releases everything held (the end of the input), reporting the holes.
    mutating func finish() -> Output {
        var out = Output()
        for name in devices.keys.sorted() {
            guard var device = devices.removeValue(forKey: name) else { continue }
            while !device.held.isEmpty { giveUp(&device, name: name, into: &out) }
            devices[name] = device
        }
        return out
    }

    /// The seqs released, per device, are contiguous from `last`: release the held ones that follow.
    private mutating func release(_ device: inout Device, into out: inout Output) {
        while let last = device.last, let next = device.held.removeValue(forKey: last + 1) {
            out.events.append(next.event)
            device.last = last + 1
        }
        _ = lowestHeld(&device)
        if device.held.isEmpty {
            device.arrivals.removeAll(keepingCapacity: true)
            device.oldest = 0
        }
    }

    // MARK: The held, lowest seq and longest waiting first

    /// The lowest seq held, dropping released ones from the top of the heap.
    private mutating func lowestHeld(_ device: inout Device) -> Int64? {
        while let top = device.lowest.min, device.held[top] == nil { popLowest(&device) }
        return device.lowest.min
    }

    /// When the longest-waiting held event came, dropping released ones from the front.
    private mutating func longestWaiting(_ device: inout Device) -> UInt64? {
        while device.oldest < device.arrivals.count {
            let a = device.arrivals[device.oldest]
            if device.held[a.seq]?.since == a.since { return a.since }
            device.oldest += 1
            heldSteps += 1
        }
        return nil
    }

    /// Drops the released from `arrivals` (amortized O(1): at least three quarters of it go).
    private mutating func compactArrivals(_ device: inout Device) {
        var kept: [(seq: Int64, since: UInt64)] = []
        kept.reserveCapacity(device.held.count)
        for i in device.oldest ..< device.arrivals.count {
            let a = device.arrivals[i]
            if device.held[a.seq]?.since == a.since { kept.append(a) }
        }
        heldSteps += device.arrivals.count - device.oldest
        device.arrivals = kept
        device.oldest = 0
    }

    private mutating func push(_ seq: Int64, onto device: inout Device) {
        heldSteps += 1
        device.lowest.insert(seq)
    }

    private mutating func popLowest(_ device: inout Device) {
        heldSteps += 1
        _ = device.lowest.popMin()
    }

    /// Skips the hole before the lowest held seq.
    private mutating func giveUp(_ device: inout Device, name: String, into out: inout Output) {
        guard let lowest = lowestHeld(&device), let last = device.last else { return }
        if lowest > last + 1 { out.missing.append((name, last + 1, lowest - 1)) }
        device.last = lowest - 1
        release(&device, into: &out)
    }

    /// False when `id` was seen; remembers it otherwise (the oldest of `idMemory` forgotten).
    private mutating func remember(_ id: String) -> Bool { seen.insertIfNew(id) }
}
