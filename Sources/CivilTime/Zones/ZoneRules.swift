// Time zone rules: UTC offset for any instant, and the inverse (civil time → instants).
//
// Size: one type whose layout (below) binds construction, lookups and the inverse
// together: they share its private table and bucket index. The table builder is in ZoneRules+TableBuilder.swift.
//
// Layout. The UTC time line is cut into (up to) four regions, fileEnd ≤ ruleBefore ≤ ruleFrom:
//
//     F: t < fileEnd               the table (file transitions)
//     A: fileEnd ≤ t < ruleBefore   the POSIX rule, evaluated
//     B: ruleBefore ≤ t < ruleFrom  the table
//     C: t ≥ ruleFrom              the POSIX rule, evaluated
//
//   file whose last transition is after 1900:  F, A empty; B up to max(2200, last + 1)
//   rule alone (POSIX string, footer only):    F empty; A before 1900; B 1900…2200
//   file ending before 1900 (none in tzdata):  F up to the last transition; A until 1900; B; C
//   no rule (fixed offset, version 1 file):    B is everything
//
// The table holds the file's transitions followed by the footer rule's transitions up to
// 2200-01-01, precomputed at load time. A bucket index over 1800…2200 (buckets of 2^22 s ≈ 48.5
// days, each holding the number of transitions before it) turns the search into one subtraction,
// one shift and a scan of the bucket's 0–2 transitions; outside that span a binary search over the
// same [Int64] is used. Nothing on the lookup path allocates or retains.
//
//   America/New_York: 236 file transitions + 326 generated = 562 entries
//     times 562 × 8 B + offsets 563 × 4 B + type indices 563 × 2 B + buckets 3011 × 2 B ≈ 13 KB
//   measured (x86_64, release, random instants 2023–2027): utcOffset 3.5 ns, offset(at:) 8 ns,
//   resolve 8–10 ns, nextTransition 6.5 ns; loading a TZif file 80–350 µs
//
// Rule evaluation (regions A and C) looks at the events of four or five years around the instant
// (utcOffset ~190 ns); it is only reached before 1900 in rule-only zones and after 2200.
//
// The table never holds a transition that changes nothing: consecutive entries always differ in
// offset, DST flag or abbreviation. Types are deduplicated the same way, so "same type index" means
// "same offset, flag and abbreviation" everywhere.
//
// Semantics follow RFC 8536: before the first transition, type 0; from the last transition on, that
// transition's type until the footer rule's first change after it. (glibc picks the first non-DST
// type before the first transition and applies the footer from the last transition itself; the two
// agree on every file in tzdata.)

/// The offset from UTC in force at an instant.
public struct ZoneOffset: Hashable, Sendable {
    /// Seconds east of UTC (New York in winter: −18000).
    public var utcOffsetSeconds: Int
    /// Whether this is daylight saving time (as the zone data flags it: Dublin's winter is "DST").
    public var isDST: Bool
    /// The abbreviation, e.g. `EST`, `CEST`, `+0530`.
    public var abbreviation: String

    @inlinable
    public init(utcOffsetSeconds: Int, isDST: Bool, abbreviation: String) {
        self.utcOffsetSeconds = utcOffsetSeconds; self.isDST = isDST; self.abbreviation = abbreviation
    }
}

/// How a civil time (local seconds) maps onto instants in a zone.
public enum LocalTimeResolution: Equatable, Sendable {
    /// The civil time occurs once, at this UTC second.
    case unique(Int64)
    /// The civil time occurs twice (the clock was set back); the UTC seconds of the first and the
    /// last occurrence. (Should a zone repeat it more than twice, the ones between are not named.)
    case repeated(first: Int64, last: Int64)
    /// The civil time does not exist (the clock jumped over it). `transition` is the UTC second at
    /// which the jump happens, which is also the first existing instant after the gap;
    /// `gapSeconds` is the offset after the jump minus the offset before.
    case skipped(transition: Int64, gapSeconds: Int64)
}

/// The rules of one time zone: UTC offset, DST flag and abbreviation for every instant, the
/// transitions between them, and the instants that a civil time denotes.
///
/// Load from a TZif file (``init(tzif:identifier:)``), a POSIX TZ rule (``init(posixTZ:)``), or a
/// fixed offset. Values are immutable and cheap to share across threads.
public struct ZoneRules: Sendable {
    /// The zone's name: an IANA identifier (`Europe/Berlin`), a TZ rule string, or a label.
    public let identifier: String

    /// Table region: transition instants, strictly ascending, all in `(ruleBefore, ruleFrom)`.
    @usableFromInline let _times: [Int64]
    /// `_times.count + 1` offsets: `[0]` before `_times[0]`, `[i + 1]` from `_times[i]` on.
    @usableFromInline let _offsets: [Int32]
    /// Parallel to `_offsets`: indices into `_types`.
    @usableFromInline let _typeIndices: [UInt16]
    /// Distinct local time types.
    @usableFromInline let _types: [ZoneOffset]
    /// The POSIX rule's DST schedule for regions A and C (nil: no rule regions).
    @usableFromInline let _rule: DaylightSchedule?
    /// Indices into `_types` of the rule's standard and daylight types.
    @usableFromInline let _ruleStandardType: UInt16
    @usableFromInline let _ruleDaylightType: UInt16
    /// End of region F (the file's own transitions when they end before 1900), start of A.
    @usableFromInline let _fileEnd: Int64
    /// Start of the table region B (`Int64.min` unless the rule governs some time before 1900).
    @usableFromInline let _ruleBefore: Int64
    /// End of the table region (`Int64.max` when there is no rule).
    @usableFromInline let _ruleFrom: Int64
    /// Smallest and largest offset of any type the zone can be in.
    @usableFromInline let _minOffset: Int64
    @usableFromInline let _maxOffset: Int64
    /// Bucket index over `[bucketBase, bucketBase + (_buckets.count - 1) << bucketShift)`:
    /// `_buckets[k]` = number of `_times` before the start of bucket k. Empty when there are more
    /// than 65535 transitions (then every lookup is a binary search).
    @usableFromInline let _buckets: [UInt16]
    /// The civil months of 1970…2099 by day (``CivilMonthIndex``, one per process, shared): what
    /// a next fire's month search reads with the zone it is given.
    @usableFromInline let _months: CivilMonthIndex

    /// 1800-01-01T00:00:00Z: start of the bucket index.
    @usableFromInline static let bucketBase: Int64 = -5_364_662_400
    @usableFromInline static let bucketShift: UInt64 = 22

    /// 1900-01-01T00:00:00Z and 2200-01-01T00:00:00Z: the span precomputed from rules.
    @usableFromInline static let tableStart: Int64 = -2_208_988_800
    @usableFromInline static let tableEnd: Int64 = 7_258_118_400

    /// Whether `other` has this zone's name and the same rules (transitions, offsets, the POSIX
    /// rule): how the agent tells that the device zone changed while it runs.
    /// - Complexity: O(transitions); O(1) when both share their storage (the same file loaded once).
    public func hasSameRules(as other: ZoneRules) -> Bool {
        identifier == other.identifier && _times == other._times && _offsets == other._offsets
            && _typeIndices == other._typeIndices && _types == other._types && _rule == other._rule
            && _ruleStandardType == other._ruleStandardType && _ruleDaylightType == other._ruleDaylightType
            && _fileEnd == other._fileEnd && _ruleBefore == other._ruleBefore && _ruleFrom == other._ruleFrom
    }

    // MARK: Construction

    /// Coordinated Universal Time (abbreviation `UTC`).
    public static let utc = ZoneRules(fixedOffsetSeconds: 0, identifier: "UTC", abbreviation: "UTC")

    /// A zone that is always `fixedOffsetSeconds` east of UTC, abbreviated like tzdata's
    /// numeric abbreviations (`+0530`, `-03`).
    ///
    /// - Precondition: `fixedOffsetSeconds` is within −89999…93599 (RFC 8536's range).
    /// - Complexity: O(1).
    public init(fixedOffsetSeconds: Int, identifier: String) {
        self.init(fixedOffsetSeconds: fixedOffsetSeconds, identifier: identifier,
                  abbreviation: Self.numericAbbreviation(fixedOffsetSeconds))
    }

    init(fixedOffsetSeconds: Int, identifier: String, abbreviation: String) {
        precondition((-89_999...93_599).contains(fixedOffsetSeconds), "UTC offset out of range")
        var b = TableBuilder()
        b.initial = b.typeIndex(ZoneOffset(utcOffsetSeconds: fixedOffsetSeconds, isDST: false, abbreviation: abbreviation))
        self.init(identifier: identifier, builder: b, rule: nil, ruleTypes: (0, 0),
                  ruleBefore: .min, ruleFrom: .max)
    }

    /// Rules from the bytes of a TZif file (RFC 8536, versions 1–3; version 4 is read the same way).
    ///
    /// Version 2+ files are read from their 64-bit block; leap second records are skipped (offsets
    /// do not depend on them, as with glibc's `tm_gmtoff`); the footer rule governs instants after
    /// the last transition, and all instants when there are no transitions.
    ///
    /// - Throws: ``ZoneError`` naming `identifier` and the fault; never traps, whatever the bytes.
    /// - Complexity: O(n + y) for n transitions and y rule-generated transitions up to 2200.
    public init(tzif bytes: [UInt8], identifier: String) throws(ZoneError) {
        let file = try TZifFile(bytes: bytes, zone: identifier)
        var rule: PosixTZRule? = nil
        if let footer = file.footer, !footer.isEmpty {
            do { rule = try PosixTZRule(parsing: footer) } catch {
                throw ZoneError.badFooter(zone: identifier, footer: footer, position: error.position, fault: error.fault)
            }
        }
        var b = TableBuilder()
        let map = file.types.map { b.typeIndex(ZoneOffset(utcOffsetSeconds: Int($0.utcOffset), isDST: $0.isDST, abbreviation: $0.abbreviation)) }
        guard let rule else {
            b.initial = map[0]
            for (t, k) in zip(file.transitionTimes, file.transitionTypes) { b.append(t, map[Int(k)]) }
            self.init(identifier: identifier, builder: b, rule: nil, ruleTypes: (0, 0), ruleBefore: .min, ruleFrom: .max)
            return
        }
        guard let last = file.transitionTimes.last else {
            self.init(identifier: identifier, rule: rule, builder: b)
            return
        }
        b.initial = map[0]
        for (t, k) in zip(file.transitionTimes, file.transitionTypes) { b.append(t, map[Int(k)]) }
        // A rule without DST never changes: the last transition's type stays (it is the rule's
        // standard type in a consistent file). Nothing comes after a transition at Int64.max.
        guard let dst = rule.dst, last < .max else {
            self.init(identifier: identifier, builder: b, rule: nil, ruleTypes: (0, 0), ruleBefore: .min, ruleFrom: .max)
            return
        }
        let types = b.ruleTypes(rule)
        if last >= Self.tableStart {
            b.appendRuleChanges(dst.schedule, types: types, after: last, before: Self.tableEnd)
            self.init(identifier: identifier, builder: b, rule: dst.schedule, ruleTypes: types,
                      ruleBefore: .min, ruleFrom: max(Self.tableEnd, last + 1))
        } else {
            // The rule governs (last, 1900) by evaluation (region A), then the table from 1900.
            b.append(Self.tableStart, dst.schedule.isDST(at: Self.tableStart) ? types.daylight : types.standard)
            b.appendRuleChanges(dst.schedule, types: types, after: Self.tableStart, before: Self.tableEnd)
            self.init(identifier: identifier, builder: b, rule: dst.schedule, ruleTypes: types,
                      fileEnd: last + 1, ruleBefore: Self.tableStart, ruleFrom: Self.tableEnd)
        }
    }

    /// Rules from a POSIX TZ string such as `EST5EDT,M3.2.0,M11.1.0` or `<+0330>-3:30`; the
    /// identifier is the string itself.
    ///
    /// Accepts RFC 8536's extensions: quoted `<…>` abbreviations, rule times from −167 to 167 hours,
    /// DST all year (`EST5EDT4,0/0,J365/25`). A DST part without dates uses `M3.2.0,M11.1.0`.
    ///
    /// - Throws: ``ZoneError/badPosixTZ(text:position:fault:)``.
    /// - Complexity: O(y): the rule's transitions from 1900 to 2200 are precomputed.
    public init(posixTZ: String) throws(ZoneError) {
        let rule: PosixTZRule
        do { rule = try PosixTZRule(parsing: posixTZ) } catch {
            throw ZoneError.badPosixTZ(text: posixTZ, position: error.position, fault: error.fault)
        }
        self.init(identifier: posixTZ, rule: rule, builder: TableBuilder())
    }

    /// A zone that is a rule alone: rule before 1900 and after 2200, table in between.
    private init(identifier: String, rule: PosixTZRule, builder: TableBuilder) {
        var b = builder
        let types = b.ruleTypes(rule)
        guard let dst = rule.dst else {
            b.initial = types.standard
            self.init(identifier: identifier, builder: b, rule: nil, ruleTypes: types, ruleBefore: .min, ruleFrom: .max)
            return
        }
        b.initial = dst.schedule.isDST(at: Self.tableStart) ? types.daylight : types.standard
        b.appendRuleChanges(dst.schedule, types: types, after: Self.tableStart, before: Self.tableEnd)
        self.init(identifier: identifier, builder: b, rule: dst.schedule, ruleTypes: types,
                  ruleBefore: Self.tableStart, ruleFrom: Self.tableEnd)
    }

    private init(identifier: String, builder b: TableBuilder, rule: DaylightSchedule?,
                 ruleTypes: (standard: UInt16, daylight: UInt16), fileEnd: Int64 = .min,
                 ruleBefore: Int64, ruleFrom: Int64) {
        self.identifier = identifier
        self._fileEnd = fileEnd
        self._times = b.times
        self._typeIndices = b.typeIndices
        self._offsets = b.typeIndices.map { Int32(b.types[Int($0)].utcOffsetSeconds) }
        self._types = b.types
        self._rule = rule
        self._ruleStandardType = ruleTypes.standard
        self._ruleDaylightType = ruleTypes.daylight
        self._ruleBefore = ruleBefore
        self._ruleFrom = ruleFrom
        // Offsets the zone can be in: the table's, and the rule's when it is used.
        var used = Set(b.typeIndices)
        if rule != nil { used.insert(ruleTypes.standard); used.insert(ruleTypes.daylight) }
        let offsets = used.map { Int64(b.types[Int($0)].utcOffsetSeconds) }
        self._minOffset = offsets.min() ?? 0
        self._maxOffset = offsets.max() ?? 0
        self._buckets = Self.buckets(b.times)
        self._months = .shared
        #if DEBUG
        _checkInvariants()
        #endif
    }

    /// The bucket index of `times` over 1800…2200 (see `_buckets`).
    static func buckets(_ times: [Int64]) -> [UInt16] {
        guard times.count <= Int(UInt16.max) else { return [] }
        let count = Int((tableEnd - bucketBase) >> Int64(bucketShift)) + 1
        var result = [UInt16](repeating: 0, count: count + 1)
        var i = 0
        for k in 0...count {
            let start = bucketBase + Int64(k) << Int64(bucketShift)
            while i < times.count && times[i] < start { i += 1 }
            result[k] = UInt16(i)
        }
        return result
    }

    static func numericAbbreviation(_ seconds: Int) -> String {
        let a = abs(seconds)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var s = (seconds < 0 ? "-" : "+") + two(a / 3600)
        if a % 3600 != 0 { s += two(a / 60 % 60) }
        if a % 60 != 0 { s += two(a % 60) }
        return s
    }

    // MARK: Lookups

    /// Seconds east of UTC at the instant `t` (seconds since the Unix epoch).
    ///
    /// The hot path of calendar computations: no allocation, no rule evaluation for 1900…2200.
    ///
    /// - Complexity: O(1) for 1800…2200 (a bucket index, then the bucket's 0–2 transitions,
    ///   ~3.5 ns); O(log n) before 1800; O(1) but ~190 ns where the rule is evaluated.
    @inlinable
    public func utcOffset(atSecondsSinceEpoch t: Int64) -> Int {
        if _fastPath(t >= _ruleBefore && t < _ruleFrom) {
            return Int(_offsets.withUnsafeBufferPointer { $0[_tableIndex(t)] })
        }
        return Int(_types[_typeIndex(at: t)].utcOffsetSeconds)
    }

    /// The offset, DST flag and abbreviation in force at `t`.
    ///
    /// - Complexity: as ``utcOffset(atSecondsSinceEpoch:)``.
    @inlinable
    public func offset(at t: WallInstant) -> ZoneOffset {
        _types[_typeIndex(at: t.secondsSinceEpoch)]
    }

    /// The number of table transitions at or before `t` (= index into `_offsets`).
    @inlinable @inline(__always)
    func _tableIndex(_ t: Int64) -> Int {
        _times.withUnsafeBufferPointer { times in
            _buckets.withUnsafeBufferPointer { buckets in
                // One unsigned comparison covers both ends of the indexed span.
                let k = UInt64(bitPattern: t &- Self.bucketBase) &>> Self.bucketShift
                if _fastPath(k &+ 1 < UInt64(buckets.count)) {
                    var i = Int(buckets[Int(k)])
                    let end = Int(buckets[Int(k) &+ 1])
                    while i < end && times[i] <= t { i &+= 1 }
                    return i
                }
                var base = 0, length = times.count
                while length > 0 {
                    let half = length &>> 1
                    if times[base &+ half] <= t {
                        base = base &+ half &+ 1
                        length = length &- half &- 1
                    } else {
                        length = half
                    }
                }
                return base
            }
        }
    }

    /// The stretch of the table holding `t`: the offset in force from `start` (the last table
    /// transition at or before `t`, `Int64.min` when the zone has none and no earlier region) to
    /// `end` (the next table transition, or the end of the table region), and the offset just
    /// before `start` (= `offset` when there is no transition). One table lookup answers what
    /// `utcOffset`, `previousTransition` and the offset before it answer together. nil outside
    /// the table region, or when the stretch begins in an earlier region.
    ///
    /// A bound may be a transition that changes only the DST flag or the abbreviation: the offset
    /// is constant on `[start, end)`, perhaps also beyond.
    /// - Complexity: as ``utcOffset(atSecondsSinceEpoch:)``.
    @inline(__always)
    func offsetStretch(containing t: Int64) -> OffsetStretch? {
        guard _fastPath(t >= _ruleBefore && t < _ruleFrom) else { return nil }
        let i = _tableIndex(t)
        return _times.withUnsafeBufferPointer { times in
            _offsets.withUnsafeBufferPointer { offsets in
                // `_offsets` has `_times.count + 1` entries and 0 ≤ i ≤ `_times.count`.
                let offset = Int64(offsets[i])
                let end = i < times.count ? times[i] : _ruleFrom
                if i > 0 { return OffsetStretch(start: times[i &- 1], end: end, offset: offset, offsetBefore: Int64(offsets[i &- 1])) }
                if _ruleBefore == .min { return OffsetStretch(start: .min, end: end, offset: offset, offsetBefore: offset) }
                return nil
            }
        }
    }

    /// What a next fire needs of the stretch of constant offset holding `t`, when `t` is at least
    /// ``offsetRange`` after its start (so no gap before `t` maps a civil time past it): the
    /// offset, and the civil times shown once in the stretch, `lower ..< upper` (see
    /// ``civilTimesShownOnce(in:)``); nil outside the table region or nearer its start.
    @inline(__always)
    func settledStretch(containing t: Int64) -> (offset: Int64, lower: Int64, upper: Int64)? {
        guard _fastPath(t >= _ruleBefore && t < _ruleFrom) else { return nil }
        let i = _tableIndex(t)
        return _times.withUnsafeBufferPointer { times in
            _offsets.withUnsafeBufferPointer { offsets in
                // `_offsets` has `_times.count + 1` entries and 0 ≤ i ≤ `_times.count`; times
                // are finite, the offsets within ±26 h: no overflow.
                let lower: Int64
                if i > 0 {
                    let start = times[i &- 1]
                    guard t &- start >= _maxOffset &- _minOffset else { return nil }
                    lower = start &+ _maxOffset
                } else {
                    guard _ruleBefore == .min else { return nil }
                    lower = .min
                }
                let upper = i < times.count ? times[i] &+ _minOffset : _ruleFrom == .max ? .max : _ruleFrom &+ _minOffset
                return (Int64(offsets[i]), lower, max(lower, upper))
            }
        }
    }

    /// Whether the civil time `L` is shown once in the zone, within `s`: no stretch other than
    /// `s` can show it (every earlier one ends at `s.start` and shows times before
    /// `s.start + _maxOffset`, every later one starts at `s.end` or after and shows times from
    /// `s.end + _minOffset`), and `s` shows it at `L − s.offset`. Then `resolve(localSeconds: L)`
    /// is `.unique(L − s.offset)`.
    @inline(__always)
    func showsOnce(_ L: Int64, in s: OffsetStretch) -> Bool {
        // L is a civil time of years 1…9999 and the offsets are within ±26 h: no overflow.
        L &- _maxOffset >= s.start && L &- _minOffset < s.end
    }

    /// The largest offset minus the smallest: how far a civil time can be from its instant's
    /// neighbours' civil times; an instant this far after a transition is past any gap's effect.
    @inline(__always)
    var offsetRange: Int64 { _maxOffset &- _minOffset }

    /// The civil times `L` for which ``showsOnce(_:in:)`` holds: `s.start + _maxOffset ..<
    /// s.end + _minOffset` (clamped to `Int64`; empty when the stretch is too short).
    @inline(__always)
    func civilTimesShownOnce(in s: OffsetStretch) -> Range<Int64> {
        let lower = s.start == .min ? Int64.min : s.start &+ _maxOffset
        let upper = s.end == .max ? Int64.max : s.end &+ _minOffset
        return lower ..< max(lower, upper)
    }

    /// Index into `_types` of the type in force at `t`.
    @usableFromInline
    func _typeIndex(at t: Int64) -> Int {
        if let rule = _rule, (t >= _fileEnd && t < _ruleBefore) || t >= _ruleFrom {
            return Int(rule.isDST(at: t) ? _ruleDaylightType : _ruleStandardType)
        }
        return Int(_typeIndices[_tableIndex(t)])
    }

    /// The first instant after `t` at which the offset, DST flag or abbreviation changes; nil if
    /// none does.
    ///
    /// The offset is constant on `[t, nextTransition(after: t))`. A transition may change only
    /// the DST flag or the abbreviation; compare offsets when only the offset matters.
    ///
    /// - Complexity: as ``utcOffset(atSecondsSinceEpoch:)`` (~6.5 ns in 1800…2200).
    public func nextTransition(after t: Int64) -> Int64? {
        if _fastPath(t >= _ruleBefore && t < _ruleFrom) {
            let i = _tableIndex(t)
            if let next = _times.withUnsafeBufferPointer({ i < $0.count ? $0[i] : nil }) { return next }
        }
        return _nextTransitionAcrossRegions(after: t)
    }

    /// The region holding `t` (rule or table) and where it ends (nil: it runs to the end of time).
    func _region(containing t: Int64) -> (isRule: Bool, end: Int64?) {
        guard _rule != nil else { return (false, nil) }
        if t < _fileEnd { return (false, _fileEnd) }
        if t < _ruleBefore { return (true, _ruleBefore) }
        if t < _ruleFrom { return (false, _ruleFrom) }
        return (true, nil)
    }

    /// The region holding `t` and where it starts (nil: it runs from the start of time).
    func _region(startingBefore t: Int64) -> (isRule: Bool, start: Int64?) {
        guard _rule != nil else { return (false, nil) }
        if t >= _ruleFrom { return (true, _ruleFrom) }
        if t >= _ruleBefore { return (false, _ruleBefore == .min ? nil : _ruleBefore) }
        if t >= _fileEnd { return (true, _fileEnd == .min ? nil : _fileEnd) }
        return (false, nil)
    }

    /// `nextTransition` region by region: a change inside the region holding `t`, else the
    /// boundary when the type differs on its two sides, else on into the next region.
    @inline(never)
    func _nextTransitionAcrossRegions(after t: Int64) -> Int64? {
        guard t < .max else { return nil }
        var t = t
        while true {
            let (isRule, end) = _region(containing: t)
            let change: Int64?
            if isRule {
                change = _rule?.state(at: t).next
            } else {
                let i = _tableIndex(t)
                change = i < _times.count ? _times[i] : nil
            }
            if let change, end.map({ change < $0 }) ?? true { return change }
            guard let b = end else { return nil }
            if _typeIndex(at: b) != _typeIndex(at: b - 1) { return b }
            t = b
        }
    }

    /// The last instant before `t` at which the offset, DST flag or abbreviation changed; nil if
    /// none did.
    ///
    /// - Complexity: as ``utcOffset(atSecondsSinceEpoch:)``.
    public func previousTransition(before t: Int64) -> Int64? {
        if _fastPath(t > _ruleBefore && t <= _ruleFrom) {
            let i = _tableIndex(t &- 1)
            if i > 0, let p = _times.withUnsafeBufferPointer({ $0[i &- 1] > _ruleBefore ? $0[i &- 1] : nil }) { return p }
        }
        return _previousTransitionAcrossRegions(before: t)
    }

    @inline(never)
    func _previousTransitionAcrossRegions(before t: Int64) -> Int64? {
        guard t > .min else { return nil }
        var t = t
        while true {
            let (isRule, start) = _region(startingBefore: t - 1)
            let change: Int64?
            if isRule {
                change = _rule?.state(at: t - 1).previous
            } else {
                let i = _tableIndex(t - 1)
                change = i > 0 ? _times[i - 1] : nil
            }
            if let change, start.map({ change > $0 }) ?? true { return change }
            guard let b = start else { return nil }
            if _typeIndex(at: b) != _typeIndex(at: b - 1) { return b }
            t = b
        }
    }

    // MARK: Civil time → instants

    /// The instants at which the zone's clocks show the civil time `localSeconds` (civil time
    /// counted as if the zone were UTC: ``CivilDateTime/localSeconds``).
    ///
    /// Every stretch of constant offset `o` that meets `[L − maxOffset, L − minOffset]` is tested
    /// for `u = L − o` lying in it, so transitions less than a day apart, offsets up to ±25 h and
    /// whole skipped days (Pacific/Apia, 2011-12-30) come out right. When no instant matches, the
    /// first jump of the clock over `L` is reported. Within 26 h of the limits of `Int64` the
    /// result is clamped.
    ///
    /// - Complexity: O(1 + k) for k transitions within the zone's offset range of `L` (usually 0:
    ///   ~8 ns); each further stretch costs a table step, or a rule evaluation outside 1900…2200.
    public func resolve(localSeconds L: Int64) -> LocalTimeResolution {
        let lo = Self.saturatingSubtract(L, _maxOffset)
        let hi = Self.saturatingSubtract(L, _minOffset)
        if _fastPath(lo >= _ruleBefore && hi < _ruleFrom) {
            // Usual case: no transition in the window, one stretch, one answer.
            let i = _tableIndex(lo)
            let next = _times.withUnsafeBufferPointer { i < $0.count ? $0[i] : .max }
            if next > hi { return .unique(Self.saturatingSubtract(L, Int64(_offsets.withUnsafeBufferPointer { $0[i] }))) }
            return _resolveInTable(L, lo, hi, i)
        }
        return _resolveAcrossRegions(L, lo, hi)
    }

    /// `resolve` anywhere: stretch by stretch through `nextTransition(after:)`.
    @inline(never)
    func _resolveAcrossRegions(_ L: Int64, _ lo: Int64, _ hi: Int64) -> LocalTimeResolution {
        var segmentStart = lo          // u = L − o ≥ lo always, so the first stretch may start at lo
        var offset = Int64(utcOffset(atSecondsSinceEpoch: lo))
        var first: Int64? = nil, last: Int64? = nil
        var gap: (at: Int64, size: Int64)? = nil
        while true {
            let next = nextTransition(after: segmentStart)
            let (u, o) = L.subtractingReportingOverflow(offset)
            if !o && u >= segmentStart && (next.map { u < $0 } ?? true) {
                if first == nil { first = u }
                last = u
            }
            guard let n = next, n <= hi else { break }
            let after = Int64(utcOffset(atSecondsSinceEpoch: n))
            if gap == nil && after > offset {
                // The clock jumps from n + offset to n + after: over L when n + offset ≤ L < n + after.
                let (a, o1) = n.addingReportingOverflow(offset), (b, o2) = n.addingReportingOverflow(after)
                if !o1 && !o2 && a <= L && L < b { gap = (n, after - offset) }
            }
            segmentStart = n
            offset = after
        }
        if let first, let last {
            return first == last ? .unique(first) : .repeated(first: first, last: last)
        }
        if let gap { return .skipped(transition: gap.at, gapSeconds: gap.size) }
        return .unique(Self.saturatingSubtract(L, offset))
    }

    /// `resolve` when the whole window lies in the table and holds transitions: a walk along the
    /// table from entry `i` (the one in force at `lo`), with the same tests as the general loop.
    @inline(never)
    func _resolveInTable(_ L: Int64, _ lo: Int64, _ hi: Int64, _ start: Int) -> LocalTimeResolution {
        _times.withUnsafeBufferPointer { times in
            _offsets.withUnsafeBufferPointer { offsets in
                var i = start
                var segmentStart = lo
                var first: Int64? = nil, last: Int64? = nil
                var gap: (at: Int64, size: Int64)? = nil
                while true {
                    let offset = Int64(offsets[i])
                    // Past the last transition the stretch runs to ruleFrom > hi ≥ any candidate.
                    let next = i < times.count ? times[i] : Int64.max
                    let (u, o) = L.subtractingReportingOverflow(offset)
                    if !o && u >= segmentStart && u < next {
                        if first == nil { first = u }
                        last = u
                    }
                    if next > hi { break }
                    let after = Int64(offsets[i + 1])
                    if gap == nil && after > offset {
                        let (a, o1) = next.addingReportingOverflow(offset), (b, o2) = next.addingReportingOverflow(after)
                        if !o1 && !o2 && a <= L && L < b { gap = (next, after - offset) }
                    }
                    segmentStart = next
                    i += 1
                }
                if let first, let last {
                    return first == last ? .unique(first) : .repeated(first: first, last: last)
                }
                if let gap { return .skipped(transition: gap.at, gapSeconds: gap.size) }
                return .unique(Self.saturatingSubtract(L, Int64(offsets[i])))
            }
        }
    }

    @inlinable
    static func saturatingSubtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (v, o) = a.subtractingReportingOverflow(b)
        return o ? (b > 0 ? .min : .max) : v
    }
}

/// A stretch of constant UTC offset of a zone's table (``ZoneRules/offsetStretch(containing:)``).
struct OffsetStretch {
    let start: Int64
    let end: Int64
    let offset: Int64
    let offsetBefore: Int64
}
