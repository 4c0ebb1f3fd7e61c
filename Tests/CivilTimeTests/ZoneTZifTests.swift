import Testing
@testable import CivilTime

/// Writes TZif files for tests (RFC 8536 §3), valid or deliberately broken.
struct ZoneTZifWriter {
    struct TimeType { var utoff: Int32; var isdst: UInt8 = 0; var idx: UInt8 }
    var version: UInt8 = UInt8(ascii: "2")      // 0 for version 1
    var times: [Int64] = []
    var indices: [UInt8] = []
    var types: [TimeType] = [TimeType(utoff: 0, idx: 0)]
    var chars: [UInt8] = Array("UTC\0".utf8)
    var leaps: [(Int64, Int32)] = []
    var indicators = false                       // write isstd/isut arrays (typecnt each)
    var footer: String? = ""                     // nil: no footer bytes at all
    /// The version 1 block of a version 2+ file: by default empty but valid (one type, "\0").
    var v1Empty = true

    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be64(_ v: Int64) -> [UInt8] { be(UInt32(UInt64(bitPattern: v) >> 32)) + be(UInt32(UInt64(bitPattern: v) & 0xFFFF_FFFF)) }

    func header(version: UInt8, timecnt: Int, typecnt: Int, charcnt: Int, leapcnt: Int) -> [UInt8] {
        let ind = indicators ? typecnt : 0
        return Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
            + [ind, ind, leapcnt, timecnt, typecnt, charcnt].flatMap { Self.be(UInt32($0)) }
    }

    func block(timeSize: Int) -> [UInt8] {
        var b: [UInt8] = []
        for t in times { b += timeSize == 8 ? Self.be64(t) : Self.be(UInt32(bitPattern: Int32(truncatingIfNeeded: t))) }
        b += indices
        for t in types { b += Self.be(UInt32(bitPattern: t.utoff)) + [t.isdst, t.idx] }
        b += chars
        for (t, c) in leaps { b += (timeSize == 8 ? Self.be64(t) : Self.be(UInt32(truncatingIfNeeded: t))) + Self.be(UInt32(bitPattern: c)) }
        if indicators { b += [UInt8](repeating: 0, count: types.count * 2) }
        return b
    }

    /// Byte offsets where each part starts, for truncation tests.
    var bytes: [UInt8] {
        if version == 0 {
            return header(version: 0, timecnt: times.count, typecnt: types.count, charcnt: chars.count, leapcnt: leaps.count)
                + block(timeSize: 4)
        }
        var v1: [UInt8]
        if v1Empty {
            v1 = header(version: version, timecnt: 0, typecnt: 1, charcnt: 1, leapcnt: 0) + [0, 0, 0, 0, 0, 0, 0]
            if indicators { v1 = header(version: version, timecnt: 0, typecnt: 1, charcnt: 1, leapcnt: 0) + [0, 0, 0, 0, 0, 0, 0, 0, 0] }
        } else {
            v1 = header(version: version, timecnt: times.count, typecnt: types.count, charcnt: chars.count, leapcnt: leaps.count)
                + block(timeSize: 4)
        }
        var b = v1 + header(version: version, timecnt: times.count, typecnt: types.count, charcnt: chars.count, leapcnt: leaps.count)
            + block(timeSize: 8)
        if let footer { b += Array(("\n" + footer + "\n").utf8) }
        return b
    }

    /// A small New York–like zone: LMT, then EST/EDT transitions, footer rule.
    static var sample: ZoneTZifWriter {
        var w = ZoneTZifWriter()
        w.types = [TimeType(utoff: -17762, idx: 0), TimeType(utoff: -14400, isdst: 1, idx: 4), TimeType(utoff: -18000, idx: 8)]
        w.chars = Array("LMT\0EDT\0EST\0".utf8)
        w.times = [-2_717_650_800, 1_710_054_000, 1_730_613_600]   // 1883-11-18, 2024-03-10, 2024-11-03
        w.indices = [2, 1, 2]
        w.footer = "EST5EDT,M3.2.0,M11.1.0"
        return w
    }
}

@Suite("Zone TZif parsing")
struct ZoneTZifTests {
    func load(_ bytes: [UInt8]) throws(ZoneError) -> ZoneRules { try ZoneRules(tzif: bytes, identifier: "Test/Zone") }

    @Test func version2UsesThe64BitBlockAndTheFooter() throws {
        var w = ZoneTZifWriter.sample
        w.v1Empty = true      // a reader of the v1 block would see UTC only
        let z = try load(w.bytes)
        #expect(z.identifier == "Test/Zone")
        #expect(z.utcOffset(atSecondsSinceEpoch: -3_000_000_000) == -17762)          // before the first: type 0
        #expect(z.offset(at: WallInstant(secondsSinceEpoch: 0)) == ZoneOffset(utcOffsetSeconds: -18000, isDST: false, abbreviation: "EST"))
        #expect(z.utcOffset(atSecondsSinceEpoch: 1_710_054_000) == -14400)
        // After the last transition: the footer (2025-03-09T07:00Z starts DST), also past 2200.
        #expect(z.nextTransition(after: 1_730_613_600) == 1_741_503_600)
        #expect(z.utcOffset(atSecondsSinceEpoch: 1_741_503_600) == -14400)
        #expect(z.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(2500, 7, 1)) == -14400)
        #expect(z.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(2500, 1, 1)) == -18000)
        // Versions 3 and 4 read the same way.
        for v in [UInt8(ascii: "3"), UInt8(ascii: "4")] {
            w.version = v
            #expect(try load(w.bytes).utcOffset(atSecondsSinceEpoch: 0) == -18000)
        }
    }

    @Test func version1HasNoFooter() throws {
        var w = ZoneTZifWriter.sample
        w.version = 0
        w.times = [-2_000_000_000, 1_710_054_000, 1_730_613_600]
        let z = try load(w.bytes)
        #expect(z.utcOffset(atSecondsSinceEpoch: 1_730_613_600 + 400 * 86400) == -18000)   // last type forever
        #expect(z.nextTransition(after: 1_730_613_600) == nil)
        #expect(z.previousTransition(before: 0) == -2_000_000_000)
    }

    @Test func footerOnlyAndEmptyFooter() throws {
        var w = ZoneTZifWriter()
        w.version = UInt8(ascii: "3")
        w.types = [ZoneTZifWriter.TimeType(utoff: 7200, idx: 0)]
        w.chars = Array("IST\0".utf8)
        w.footer = "IST-2IDT,M3.4.4/26,M10.5.0"
        let z = try load(w.bytes)        // no transitions: the footer governs all time
        #expect(z.nextTransition(after: zoneTestSeconds(2024, 1, 1)) == zoneTestSeconds(2024, 3, 29))
        #expect(z.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(1800, 7, 1)) == 10800)
        w.footer = ""
        let fixed = try load(w.bytes)    // empty footer: type 0 forever
        #expect(fixed.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(2024, 7, 1)) == 7200)
        #expect(fixed.nextTransition(after: 0) == nil)
    }

    @Test func leapSecondRecordsAreSkipped() throws {
        var w = ZoneTZifWriter.sample
        w.leaps = [(78_796_800, 1), (94_694_401, 2)]
        w.indicators = true
        let z = try load(w.bytes)
        #expect(z.utcOffset(atSecondsSinceEpoch: 1_710_054_000) == -14400)
        w.version = 0
        w.footer = nil
        #expect(try load(w.bytes).utcOffset(atSecondsSinceEpoch: 1_710_054_000) == -14400)
    }

    @Test func duplicateTypesAndNoOpTransitionsCollapse() throws {
        var w = ZoneTZifWriter.sample
        w.types.append(w.types[2])                         // a second, identical EST
        w.times = [-2_717_650_800, 0, 1_710_054_000, 1_730_613_600]
        w.indices = [2, 3, 1, 2]                           // EST → EST at 0 changes nothing
        let z = try load(w.bytes)
        #expect(z.nextTransition(after: -2_717_650_800) == 1_710_054_000)
        #expect(z._types.count == 3)
    }

    @Test func fileEndingBefore1900WithARule() throws {
        // Last transition in 1874, DST footer: the rule governs from then on, also before 1900.
        var w = ZoneTZifWriter.sample
        w.times = [-3_000_000_000]
        w.indices = [2]
        let z = try load(w.bytes)
        #expect(z.utcOffset(atSecondsSinceEpoch: -3_000_000_001) == -17762)
        #expect(z.utcOffset(atSecondsSinceEpoch: -3_000_000_000) == -18000)
        #expect(z.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(1880, 7, 1)) == -14400)
        #expect(z.utcOffset(atSecondsSinceEpoch: zoneTestSeconds(1950, 7, 1)) == -14400)
        #expect(z.nextTransition(after: -3_000_000_000) == zoneTestSeconds(1875, 3, 14, 7))
        #expect(z.previousTransition(before: zoneTestSeconds(1875, 3, 14, 7)) == -3_000_000_000)
        // Across 1900 (a Monday; DST began 1900-03-11, ended 1899-11-05).
        #expect(z.nextTransition(after: zoneTestSeconds(1899, 12, 1)) == zoneTestSeconds(1900, 3, 11, 7))
        #expect(z.previousTransition(before: zoneTestSeconds(1900, 3, 1)) == zoneTestSeconds(1899, 11, 5, 6))
        for L in stride(from: zoneTestSeconds(1874, 12, 1), to: zoneTestSeconds(1901, 1, 1), by: 86_400 * 7 + 3_601) {
            #expect(z.resolve(localSeconds: L) == ZoneGlibcOracleTests.bruteForceResolve(z, L))
        }
    }

    // MARK: Errors, one per fault

    @Test func badMagicAndVersion() {
        var b = ZoneTZifWriter.sample.bytes
        b[3] = UInt8(ascii: "F")
        #expect(throws: ZoneError.badMagic(zone: "Test/Zone")) { try load(b) }
        #expect(throws: ZoneError.badMagic(zone: "Test/Zone")) { try load(Array("# tzdata zone.tab\n".utf8)) }
        b = ZoneTZifWriter.sample.bytes
        b[4] = UInt8(ascii: "5")
        #expect(throws: ZoneError.unsupportedVersion(zone: "Test/Zone", version: UInt8(ascii: "5"))) { try load(b) }
        b[4] = UInt8(ascii: "1")
        #expect(throws: ZoneError.unsupportedVersion(zone: "Test/Zone", version: UInt8(ascii: "1"))) { try load(b) }
    }

    @Test func truncatedInEverySection() throws {
        var w = ZoneTZifWriter.sample
        w.leaps = [(78_796_800, 1)]
        w.indicators = true
        w.v1Empty = false
        let b = w.bytes
        // Offsets of the parts, from the layout.
        let v1Size = 3 * 5 + 3 * 6 + 12 + 8 + 3 + 3
        let h2 = 44 + v1Size
        let times = h2 + 44, indices = times + 24, ttinfo = indices + 3, chars = ttinfo + 18, leaps = chars + 12
        let isstd = leaps + 12, isut = isstd + 3, footer = isut + 3
        let cases: [(Int, TZifSection)] = [
            (0, .header), (3, .header), (4, .header), (43, .header), (44, .version1DataBlock), (h2 - 1, .version1DataBlock),
            (h2, .secondHeader), (h2 + 43, .secondHeader), (times, .transitionTimes), (indices - 1, .transitionTimes),
            (indices, .transitionTypes), (ttinfo, .localTimeTypes), (chars - 1, .localTimeTypes), (chars, .abbreviations),
            (leaps, .leapSeconds), (isstd - 1, .leapSeconds), (isstd, .standardWallIndicators), (isut, .utLocalIndicators),
            (footer, .footer), (footer + 1, .footer), (b.count - 1, .footer),
        ]
        for (n, section) in cases {
            #expect(throws: ZoneError.truncated(zone: "Test/Zone", section: section, atByte: n), "prefix \(n)") {
                try load(Array(b[..<n]))
            }
        }
        _ = try load(b)
    }

    static func patchCount(_ b: inout [UInt8], header: Int, _ count: TZifCount, _ value: UInt32) {
        let field = [TZifCount.isutcnt, .isstdcnt, .leapcnt, .timecnt, .typecnt, .charcnt].firstIndex(of: count)!
        b.replaceSubrange((header + 20 + 4 * field)..<(header + 24 + 4 * field), with: ZoneTZifWriter.be(value))
    }

    @Test func countsOutOfRange() {
        var w = ZoneTZifWriter.sample
        w.version = 0
        w.footer = nil
        for (count, value) in [(TZifCount.typecnt, UInt32(0)), (.typecnt, 257), (.charcnt, 0), (.isstdcnt, 1), (.isutcnt, 2)] {
            var b = w.bytes
            Self.patchCount(&b, header: 0, count, value)
            #expect(throws: ZoneError.countOutOfRange(zone: "Test/Zone", count: count, value: value)) { try load(b) }
        }
        // A count far beyond the data is a truncation, found before anything is allocated.
        var b = w.bytes
        Self.patchCount(&b, header: 0, .timecnt, .max)
        #expect(throws: ZoneError.truncated(zone: "Test/Zone", section: .transitionTimes, atByte: b.count)) { try load(b) }
    }

    @Test func indicesOffsetsAndOrder() {
        var w = ZoneTZifWriter.sample
        w.indices = [2, 3, 2]
        #expect(throws: ZoneError.typeIndexOutOfRange(zone: "Test/Zone", transition: 1, index: 3, typeCount: 3)) { try load(w.bytes) }
        w = .sample
        w.types[1].idx = 12
        #expect(throws: ZoneError.abbreviationIndexOutOfRange(zone: "Test/Zone", type: 1, index: 12, characterCount: 12)) { try load(w.bytes) }
        w = .sample
        w.types[2].utoff = 93_600
        #expect(throws: ZoneError.offsetOutOfRange(zone: "Test/Zone", type: 2, seconds: 93_600)) { try load(w.bytes) }
        w.types[2].utoff = -90_000
        #expect(throws: ZoneError.offsetOutOfRange(zone: "Test/Zone", type: 2, seconds: -90_000)) { try load(w.bytes) }
        w = .sample
        w.times[2] = w.times[1]
        #expect(throws: ZoneError.transitionsNotAscending(zone: "Test/Zone", index: 2)) { try load(w.bytes) }
    }

    @Test func badFooters() {
        var w = ZoneTZifWriter.sample
        w.footer = "EST5EDT,M3"
        #expect(throws: ZoneError.badFooter(zone: "Test/Zone", footer: "EST5EDT,M3", position: 10, fault: .expectedRule)) { try load(w.bytes) }
        w.footer = "<+03"
        #expect(throws: ZoneError.badFooter(zone: "Test/Zone", footer: "<+03", position: 0, fault: .unterminatedName)) { try load(w.bytes) }
        var b = ZoneTZifWriter.sample.bytes
        b[b.count - 24] = UInt8(ascii: "X")     // the footer's leading newline
        #expect(throws: ZoneError.badFooter(zone: "Test/Zone", footer: "", position: 0, fault: .missingLeadingNewline)) { try load(b) }
    }

    @Test func extremeTransitionTimes() throws {
        var w = ZoneTZifWriter.sample
        w.times = [.min, 0, .max]
        let z = try load(w.bytes)
        #expect(z.utcOffset(atSecondsSinceEpoch: .min) == -18000)       // a transition at Int64.min sets the start
        #expect(z.utcOffset(atSecondsSinceEpoch: .max) == -18000)
        #expect(z.utcOffset(atSecondsSinceEpoch: 5) == -14400)
        #expect(z.nextTransition(after: 0) == .max && z.previousTransition(before: .max) == 0)
        for t: Int64 in [.min, .min + 1, -1, 0, .max - 1, .max] { _ = z.resolve(localSeconds: t) }
    }

    @Test func messagesNameZoneAndFault() {
        let e = ZoneError.truncated(zone: "Europe/Berlin", section: .transitionTypes, atByte: 812)
        #expect(e.description == "Europe/Berlin: truncated at byte 812 in transition types")
        #expect(ZoneError.unknownZone("Mars/Olympus", searchedDirectory: "/usr/share/zoneinfo").description
                == "unknown time zone \"Mars/Olympus\" (searched /usr/share/zoneinfo)")
    }
}
