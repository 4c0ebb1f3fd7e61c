/// The civil months of 1970-01-01 ..< 2100-01-01 indexed by day number: the month that holds a
/// day, and each month's first day, number and shape, in two table reads and no division. A next
/// fire's month search (``RecurrenceSchedule``) reads it through the zone it is given; outside
/// the span it computes the same from ``CivilDays``.
///
/// Layout. Days are cut into buckets of 16; a bucket holds at most one month's first day (every
/// month has 28 days or more).
///
///     buckets[k] = i << 4 | o    i: index of the month holding the bucket's last day
///                                o: that month's first day within the bucket (0…15; 0 when it
///                                   starts at or before the bucket's first day)
///     months[i]  = first | shape << 16 | (month − 1) << 21
///                                first: the month's first day number (days since 1970-01-01)
///                                shape: ``shape(length:firstWeekday:)``, 0…27
///
/// Day `d`'s month is `i` when `d mod 16 ≥ o`, else `i − 1`; the next month is `i + 1`.
///
/// Sizing: 2,968 buckets × 2 B + 1,560 months × 4 B ≈ 12 KB, built once per process
/// (``shared``) and held by every ``ZoneRules`` by reference (copy-on-write arrays).
@usableFromInline
struct CivilMonthIndex: Sendable {
    /// 2100-01-01: the first day past the index.
    @usableFromInline static let endDay: Int64 = 47_482
    @usableFromInline let buckets: [UInt16]
    @usableFromInline let months: [UInt32]

    /// The one index every zone holds.
    static let shared = CivilMonthIndex()

    init() {
        var months: [UInt32] = []
        months.reserveCapacity(1560)
        var first: Int64 = 0
        for y in Int64(1970) ..< 2100 {
            for m in 1 ... 12 {
                let length = CivilDays.daysInMonth(year: y, month: m)
                let weekday = CivilDays.weekday(dayNumber: first) - 1
                months.append(UInt32(first) | UInt32(Self.shape(length: length, firstWeekday: weekday)) << 16 | UInt32(m - 1) << 21)
                first += Int64(length)
            }
        }
        // Each bucket names the month of its last day (of the span's last day for the last bucket).
        var buckets = [UInt16](repeating: 0, count: Int((Self.endDay + 15) / 16))
        var i = 0
        for k in 0 ..< buckets.count {
            let last = min(Int64(k) * 16 + 15, Self.endDay - 1)
            while i + 1 < months.count && Int64(months[i + 1] & 0xFFFF) <= last { i += 1 }
            buckets[k] = UInt16(i) << 4 | UInt16(max(0, Int64(months[i] & 0xFFFF) - Int64(k) * 16))
        }
        self.buckets = buckets
        self.months = months
    }

    /// A month's shape: its length (28…31) and the weekday of its first day (0 = Sunday) as one
    /// number, 0…27. Two months of one shape have the same days on the same weekdays.
    @inlinable @inline(__always)
    static func shape(length: Int, firstWeekday: Int) -> Int { (length &- 28) &* 7 &+ firstWeekday }

    /// The index of the month holding day `d`, or nil outside 1970-01-01 ..< 2100-01-01.
    @inlinable @inline(__always)
    func month(containing d: Int64) -> Int? {
        guard UInt64(bitPattern: d) < UInt64(Self.endDay) else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            let b = buckets[Int(d &>> 4)]
            return Int(b &>> 4) &- (Int(d & 15) < Int(b & 15) ? 1 : 0)
        }
    }

    /// Month `i`'s first day, shape and number (1…12).
    func month(_ i: Int) -> (first: Int64, shape: Int, month: Int) {
        let e = months[i]
        return (Int64(e & 0xFFFF), Int(e &>> 16 & 31), Int(e &>> 21) + 1)
    }
}
