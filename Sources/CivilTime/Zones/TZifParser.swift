/// The contents of a TZif file (RFC 8536, versions 1–3; version 4 of RFC 9636 has the same layout
/// and is accepted too), checked but not yet turned into lookup tables.
///
/// Layout: a 44-byte header (`TZif`, version, 15 reserved bytes, six big-endian 32-bit counts),
/// a data block with 32-bit times; for version 2+ a second header and data block with 64-bit times,
/// then a footer `\n<POSIX TZ string>\n`. Readers of version 2+ skip the first block.
///
/// Data block, in order: `timecnt` transition times, `timecnt` type indices, `typecnt` 6-byte
/// local time type records (utoff: Int32, isdst: UInt8, desigidx: UInt8), `charcnt` designation
/// bytes, `leapcnt` leap second records (time + correction; skipped: offsets do not depend on them),
/// `isstdcnt` and `isutcnt` indicator bytes (skipped: only zic's input needs them).
///
/// Every read is bounds-checked before it happens; sizes are computed in `Int` from 32-bit counts,
/// which cannot overflow on a 64-bit platform. Any input yields a value or a ``ZoneError``.
struct TZifFile: Equatable {
    struct LocalTimeType: Equatable {
        var utcOffset: Int32
        var isDST: Bool
        var abbreviation: String
    }

    var version: UInt8
    var transitionTimes: [Int64]
    var transitionTypes: [UInt8]
    var types: [LocalTimeType]
    var leapSecondCount: Int
    /// The footer's TZ string (version 2+); nil for version 1, "" when the footer is empty.
    var footer: String?

    init(bytes: [UInt8], zone: String) throws(ZoneError) {
        var r = Reader(bytes: bytes, zone: zone)
        let header1 = try r.header(section: .header)
        if header1.version == 1 {
            self = try Self(block: &r, header: header1, timeSize: 4)
            return
        }
        // Skip the version 1 block: its size is fixed by its counts.
        try r.skip(header1.blockSize(timeSize: 4), section: .version1DataBlock)
        let header2 = try r.header(section: .secondHeader)
        self = try Self(block: &r, header: header2, timeSize: 8)
        // Footer: "\n" TZ "\n".
        guard let first = r.byte() else { throw r.truncated(.footer) }
        guard first == UInt8(ascii: "\n") else {
            throw ZoneError.badFooter(zone: zone, footer: "", position: 0, fault: .missingLeadingNewline)
        }
        guard let end = r.bytes[r.position...].firstIndex(of: UInt8(ascii: "\n")) else {
            throw ZoneError.truncated(zone: zone, section: .footer, atByte: bytes.count)
        }
        self.footer = String(decoding: r.bytes[r.position..<end], as: UTF8.self)
    }

    private init(block r: inout Reader, header h: Header, timeSize: Int) throws(ZoneError) {
        let zone = r.zone
        guard h.typecnt >= 1 && h.typecnt <= 256 else {
            throw ZoneError.countOutOfRange(zone: zone, count: .typecnt, value: h.typecnt)
        }
        guard h.charcnt >= 1 else { throw ZoneError.countOutOfRange(zone: zone, count: .charcnt, value: h.charcnt) }
        guard h.isstdcnt == 0 || h.isstdcnt == h.typecnt else {
            throw ZoneError.countOutOfRange(zone: zone, count: .isstdcnt, value: h.isstdcnt)
        }
        guard h.isutcnt == 0 || h.isutcnt == h.typecnt else {
            throw ZoneError.countOutOfRange(zone: zone, count: .isutcnt, value: h.isutcnt)
        }
        let timecnt = Int(h.timecnt), typecnt = Int(h.typecnt), charcnt = Int(h.charcnt)

        // Transition times.
        try r.need(timecnt * timeSize, section: .transitionTimes)
        var times = [Int64]()
        times.reserveCapacity(timecnt)
        for _ in 0..<timecnt { times.append(timeSize == 8 ? r.int64() : Int64(r.int32())) }
        for i in times.indices.dropFirst() where times[i] <= times[i - 1] {
            throw ZoneError.transitionsNotAscending(zone: zone, index: i)
        }

        // Transition type indices.
        try r.need(timecnt, section: .transitionTypes)
        let indices = Array(r.bytes[r.position..<(r.position + timecnt)])
        r.position += timecnt
        for (i, t) in indices.enumerated() where Int(t) >= typecnt {
            throw ZoneError.typeIndexOutOfRange(zone: zone, transition: i, index: Int(t), typeCount: typecnt)
        }

        // Local time type records; designations are read after them.
        try r.need(typecnt * 6, section: .localTimeTypes)
        var raw: [(utoff: Int32, isdst: UInt8, idx: UInt8)] = []
        raw.reserveCapacity(typecnt)
        for _ in 0..<typecnt { raw.append((r.int32(), r.byte()!, r.byte()!)) }

        try r.need(charcnt, section: .abbreviations)
        let chars = r.bytes[r.position..<(r.position + charcnt)]
        r.position += charcnt
        var types: [LocalTimeType] = []
        types.reserveCapacity(typecnt)
        for (i, t) in raw.enumerated() {
            guard t.utoff >= -89_999 && t.utoff <= 93_599 else {
                throw ZoneError.offsetOutOfRange(zone: zone, type: i, seconds: Int(t.utoff))
            }
            guard Int(t.idx) < charcnt else {
                throw ZoneError.abbreviationIndexOutOfRange(zone: zone, type: i, index: Int(t.idx), characterCount: charcnt)
            }
            let s = chars.startIndex + Int(t.idx)
            let e = chars[s...].firstIndex(of: 0) ?? chars.endIndex
            types.append(LocalTimeType(utcOffset: t.utoff, isDST: t.isdst != 0,
                                       abbreviation: String(decoding: chars[s..<e], as: UTF8.self)))
        }

        // Leap second records, then the two indicator arrays: size-checked and skipped.
        try r.skip(Int(h.leapcnt) * (timeSize + 4), section: .leapSeconds)
        try r.skip(Int(h.isstdcnt), section: .standardWallIndicators)
        try r.skip(Int(h.isutcnt), section: .utLocalIndicators)

        self.version = h.version
        self.transitionTimes = times
        self.transitionTypes = indices
        self.types = types
        self.leapSecondCount = Int(h.leapcnt)
        self.footer = nil
    }

    struct Header {
        var version: UInt8
        var isutcnt: UInt32, isstdcnt: UInt32, leapcnt: UInt32, timecnt: UInt32, typecnt: UInt32, charcnt: UInt32

        /// Size of the data block that follows this header.
        func blockSize(timeSize: Int) -> Int {
            Int(timecnt) * (timeSize + 1) + Int(typecnt) * 6 + Int(charcnt)
                + Int(leapcnt) * (timeSize + 4) + Int(isstdcnt) + Int(isutcnt)
        }
    }

    /// A cursor over the bytes. `need`/`skip` check bounds; the unchecked reads after a `need`
    /// stay within it.
    private struct Reader {
        let bytes: [UInt8]
        let zone: String
        var position = 0

        func truncated(_ section: TZifSection) -> ZoneError {
            .truncated(zone: zone, section: section, atByte: bytes.count)
        }

        func need(_ n: Int, section: TZifSection) throws(ZoneError) {
            guard bytes.count - position >= n else { throw truncated(section) }
        }

        mutating func skip(_ n: Int, section: TZifSection) throws(ZoneError) {
            try need(n, section: section)
            position += n
        }

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func int32() -> Int32 {
            var v: UInt32 = 0
            for k in 0..<4 { v = v << 8 | UInt32(bytes[position + k]) }
            position += 4
            return Int32(bitPattern: v)
        }

        mutating func int64() -> Int64 {
            var v: UInt64 = 0
            for k in 0..<8 { v = v << 8 | UInt64(bytes[position + k]) }
            position += 8
            return Int64(bitPattern: v)
        }

        mutating func header(section: TZifSection) throws(ZoneError) -> Header {
            // The magic is checked before the length so that a short non-TZif file reads as
            // "bad magic", not "truncated".
            let magic: [UInt8] = [0x54, 0x5A, 0x69, 0x66]   // "TZif"
            for k in 0..<4 {
                guard position + k < bytes.count else { throw truncated(section) }
                guard bytes[position + k] == magic[k] else { throw ZoneError.badMagic(zone: zone) }
            }
            try need(44, section: section)
            let version = bytes[position + 4]
            guard version == 0 || (version >= UInt8(ascii: "2") && version <= UInt8(ascii: "4")) else {
                throw ZoneError.unsupportedVersion(zone: zone, version: version)
            }
            position += 20
            var c = [UInt32](repeating: 0, count: 6)
            for k in 0..<6 { c[k] = UInt32(bitPattern: int32()) }
            return Header(version: version == 0 ? 1 : version - UInt8(ascii: "0"),
                          isutcnt: c[0], isstdcnt: c[1], leapcnt: c[2], timecnt: c[3], typecnt: c[4], charcnt: c[5])
        }
    }
}
