// The table of a ZoneRules while it is loaded: its types deduplicated and its transitions
// with no-op ones dropped, so that consecutive entries always differ (the invariant ZoneRules.swift states).

/// Collects types (deduplicated) and table entries (no-op transitions dropped) while loading.
struct TableBuilder {
    var types: [ZoneOffset] = []
    var times: [Int64] = []
    /// `times.count + 1` entries; `[0]` is the initial type.
    var typeIndices: [UInt16] = [0]

    var initial: UInt16 {
        get { typeIndices[0] }
        set { typeIndices[0] = newValue }
    }

    mutating func typeIndex(_ t: ZoneOffset) -> UInt16 {
        if let i = types.firstIndex(of: t) { return UInt16(i) }
        types.append(t)
        return UInt16(types.count - 1)
    }

    mutating func ruleTypes(_ rule: PosixTZRule) -> (standard: UInt16, daylight: UInt16) {
        let s = typeIndex(ZoneOffset(utcOffsetSeconds: Int(rule.standardOffset), isDST: false, abbreviation: rule.standardName))
        guard let dst = rule.dst else { return (s, s) }
        return (s, typeIndex(ZoneOffset(utcOffsetSeconds: Int(dst.offset), isDST: true, abbreviation: dst.name)))
    }

    /// Appends a transition at `t` (after every one so far) unless it changes nothing.
    mutating func append(_ t: Int64, _ type: UInt16) {
        if t == .min && times.isEmpty {   // nothing precedes it: it sets the initial type
            initial = type
            return
        }
        guard type != typeIndices[typeIndices.count - 1] else { return }
        times.append(t)
        typeIndices.append(type)
    }

    /// Appends the rule's changes in `(after, before)`, a span within 1900…2200.
    ///
    /// Year by year: the events of the years around the span, stably sorted, walked in groups of
    /// equal times (as `DaylightSchedule.state(at:)` does, without re-evaluating per change).
    mutating func appendRuleChanges(_ rule: DaylightSchedule, types: (standard: UInt16, daylight: UInt16),
                                    after: Int64, before: Int64) {
        guard after < before else { return }
        precondition(after >= ZoneRules.tableStart - 86400 * 366 && before <= ZoneRules.tableEnd, "span outside 1900…2200")
        func year(_ t: Int64) -> Int64 { CivilDays.date(dayNumber: floorDiv(t, 86400)).year }
        var events: [(time: Int64, order: Int, isDST: Bool)] = []
        for y in (year(after) - 1)...(year(before) + 1) {
            let (s, e) = rule.events(year: y)
            events.append((s, events.count, true))
            events.append((e, events.count, false))
        }
        events.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        var isDST = rule.isDST(at: after)
        var i = 0
        while i < events.count {
            var j = i
            while j + 1 < events.count && events[j + 1].time == events[i].time { j += 1 }
            let time = events[i].time, state = events[j].isDST
            if time > after && time < before && state != isDST {
                append(time, state ? types.daylight : types.standard)
            }
            if time > after { isDST = state }
            i = j + 1
        }
    }
}
