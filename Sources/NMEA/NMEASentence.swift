// A sentence as the framer hands it out, and the fields inside it, parsed straight from the bytes.
//
// All unsafe pointer work of the decoders lives in this file: `NMEASentence` and `NMEAField` are
// views into the framer's fixed buffer, valid only for the duration of the closure that receives
// them (they must not be stored). Everything above works on the values they return.

/// One checksum-verified sentence: the bytes between `$` and `*` (address and fields, no
/// checksum, no line end), e.g. `GPGGA,030719.000,3747.0873,S,…,0000`.
///
/// A borrowed view into the framer's buffer: valid only inside the closure that receives it.
public struct NMEASentence {
    @usableFromInline let base: UnsafePointer<UInt8>
    /// Number of bytes.
    public let count: Int

    @inlinable
    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    /// The byte at `i` (0 = first byte after `$`).
    @inlinable
    public subscript(i: Int) -> UInt8 {
        precondition(i >= 0 && i < count, "NMEASentence index out of range")
        return base[i]
    }

    /// Calls `body` with the sentence bytes.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The address field (`GPGGA`, `PGRME`): the bytes before the first comma.
    public var address: NMEAField {
        var i = 0
        while i < count && base[i] != UInt8(ascii: ",") { i += 1 }
        return NMEAField(base: base, count: i)
    }

    /// Number of data fields after the address (commas in the sentence).
    ///
    /// Eight bytes at a time: the exact count of zero bytes in `x ^ ",,,,,,,,"` (Bit Twiddling
    /// Hacks), then the tail byte by byte.
    @inlinable
    public var fieldCount: Int {
        let commas: UInt64 = 0x2C2C_2C2C_2C2C_2C2C
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var n = 0
        var i = 0
        while i &+ 8 <= count {
            let v = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) ^ commas
            let zeroBytes = ~(((v & low7) &+ low7) | v | low7)
            n &+= zeroBytes.nonzeroBitCount
            i &+= 8
        }
        while i < count {
            if base[i] == UInt8(ascii: ",") { n &+= 1 }
            i &+= 1
        }
        return n
    }

    /// A reader positioned on the first data field (after the address).
    @inlinable
    public var fields: NMEAFieldReader {
        var r = NMEAFieldReader(base: base, end: count)
        _ = r.next()   // skip the address
        return r
    }

    /// The sentence as text (allocates: for tests and diagnostics, not for the hot path).
    public var text: String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}

/// Reads comma-separated fields one after the other. Past the last field it returns empty fields.
public struct NMEAFieldReader {
    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline var position: Int

    @inlinable
    init(base: UnsafePointer<UInt8>, end: Int) {
        self.base = base
        self.end = end
        self.position = 0
    }

    /// The next field (empty past the end).
    @inlinable
    public mutating func next() -> NMEAField {
        if position > end { return NMEAField(base: base, count: 0) }
        let start = position
        var i = start
        while i < end && base[i] != UInt8(ascii: ",") { i &+= 1 }
        position = i + 1
        return NMEAField(base: base + start, count: i - start)
    }

    /// Skips `n` fields.
    @inlinable
    public mutating func skip(_ n: Int) {
        for _ in 0..<n { _ = next() }
    }
}

/// 10^n as an exact double, 0 ≤ n ≤ 15 (for scaling parsed fractions; exact powers keep the
/// division correctly rounded).
@inlinable
func powerOfTen(_ n: Int) -> Double {
    switch n {
    case 0: 1
    case 1: 1e1
    case 2: 1e2
    case 3: 1e3
    case 4: 1e4
    case 5: 1e5
    case 6: 1e6
    case 7: 1e7
    case 8: 1e8
    case 9: 1e9
    case 10: 1e10
    case 11: 1e11
    case 12: 1e12
    case 13: 1e13
    case 14: 1e14
    default: 1e15
    }
}

/// One field of a sentence: a borrowed byte range. The parsers return nil for an empty field and
/// for malformed text; they never allocate.
public struct NMEAField {
    @usableFromInline let base: UnsafePointer<UInt8>
    public let count: Int

    @inlinable
    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    @inlinable public var isEmpty: Bool { count == 0 }

    /// The field's only byte (`A`, `N`, `3`), or nil when the field is not exactly one byte.
    @inlinable
    public var character: UInt8? { count == 1 ? base[0] : nil }

    /// The first byte, or nil when empty.
    @inlinable
    public var first: UInt8? { count > 0 ? base[0] : nil }

    @inlinable
    public func equals(_ ascii: StaticString) -> Bool {
        guard ascii.utf8CodeUnitCount == count else { return false }
        let p = ascii.utf8Start
        for i in 0..<count where p[i] != base[i] { return false }
        return true
    }

    /// The field as text (allocates: tests and diagnostics only).
    public var text: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    /// A non-negative decimal integer (at most 18 digits), or nil.
    @inlinable
    public var unsignedInteger: Int? {
        guard count > 0 && count <= 18 else { return nil }
        var v = 0
        for i in 0..<count {
            let d = base[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            v = v &* 10 &+ Int(d)
        }
        return v
    }

    /// `[+-]digits[.digits]` split into its parts: integer part (at most 15 digits), fraction
    /// digits (the first 15 kept), and the number of fraction digits kept. Nil when malformed.
    @inlinable
    func decimalParts() -> (negative: Bool, integer: Int64, fraction: Int64, fractionDigits: Int)? {
        guard count > 0 else { return nil }
        var i = 0
        var negative = false
        if base[0] == UInt8(ascii: "-") { negative = true; i = 1 } else if base[0] == UInt8(ascii: "+") { i = 1 }
        var integer: Int64 = 0
        var integerDigits = 0
        while i < count {
            let d = base[i] &- UInt8(ascii: "0")
            if d >= 10 { break }
            guard integerDigits < 15 else { return nil }
            integer = integer &* 10 &+ Int64(d)
            integerDigits &+= 1
            i &+= 1
        }
        var fraction: Int64 = 0
        var fractionDigits = 0
        if i < count && base[i] == UInt8(ascii: ".") {
            i += 1
            while i < count {
                let d = base[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                if fractionDigits < 15 {
                    fraction = fraction &* 10 &+ Int64(d)
                    fractionDigits &+= 1
                }
                i &+= 1
            }
        }
        guard i == count, integerDigits > 0 || fractionDigits > 0 else { return nil }
        return (negative, integer, fraction, fractionDigits)
    }

    /// A decimal number (`-12.5`, `.5`, `3`), or nil when empty or malformed.
    @inlinable
    public var double: Double? {
        guard let p = decimalParts() else { return nil }
        let v = Double(p.integer) + Double(p.fraction) / powerOfTen(p.fractionDigits)
        return p.negative ? -v : v
    }

    /// An NMEA angle `dddmm.mmmm` as degrees (unsigned), or nil when empty, malformed, or minutes ≥ 60.
    @inlinable
    public var degreesMinutes: Double? {
        guard let p = decimalParts(), !p.negative else { return nil }
        let degrees = p.integer / 100
        let wholeMinutes = p.integer % 100
        guard wholeMinutes < 60 else { return nil }
        let minutes = Double(wholeMinutes) + Double(p.fraction) / powerOfTen(p.fractionDigits)
        return Double(degrees) + minutes / 60
    }

    /// A UTC time of day `hhmmss[.sss]`, or nil when empty or malformed (hour ≥ 24, minute ≥ 60,
    /// second > 60).
    @inlinable
    public var timeOfDay: NMEATimeOfDay? {
        guard count >= 6, let p = decimalParts(), !p.negative else { return nil }
        let hh = p.integer / 10000, mm = (p.integer / 100) % 100, ss = p.integer % 100
        guard p.integer < 1_000_000, hh < 24, mm < 60, ss <= 60 else { return nil }
        var nanos = p.fraction
        var digits = p.fractionDigits
        while digits > 9 { nanos /= 10; digits -= 1 }
        while digits < 9 { nanos *= 10; digits += 1 }
        return NMEATimeOfDay(secondOfDay: Int32(hh * 3600 + mm * 60 + ss), nanoseconds: Int32(nanos))
    }
}

/// A UTC time of day as NMEA sentences carry it (no date).
public struct NMEATimeOfDay: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 0…86_400 (86_400 only for a leap second 23:59:60).
    public var secondOfDay: Int32
    /// 0…999_999_999.
    public var nanoseconds: Int32

    @inlinable
    public init(secondOfDay: Int32, nanoseconds: Int32 = 0) {
        self.secondOfDay = secondOfDay
        self.nanoseconds = nanoseconds
    }

    public static func < (a: NMEATimeOfDay, b: NMEATimeOfDay) -> Bool {
        (a.secondOfDay, a.nanoseconds) < (b.secondOfDay, b.nanoseconds)
    }

    public var description: String {
        let s = Int(secondOfDay)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var ms = String(Int(nanoseconds) / 1_000_000)
        while ms.count < 3 { ms = "0" + ms }
        return "\(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60)).\(ms)"
    }
}

/// A calendar date as RMC and ZDA carry it (UTC).
public struct NMEADate: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    @inlinable
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }
}
