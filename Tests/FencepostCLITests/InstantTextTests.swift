import CivilTime
@testable import fencepost
import Testing

/// RFC 3339 in, UTC timestamps, offsets and durations out.
@Suite struct InstantTextTests {
    @Test func timestamps() {
        func parse(_ s: String) -> Int64? {
            if case .success(let t) = InstantText.parse(s.utf8) { return t.secondsSinceEpoch }
            return nil
        }
        #expect(parse("1970-01-01T00:00:00Z") == 0)
        #expect(parse("2026-03-08T06:59:00Z") == 1_772_953_140)
        #expect(parse("2026-03-08T01:59:00-05:00") == 1_772_953_140)
        #expect(parse("2026-03-08T07:59:00.75+01:00") == 1_772_953_140)
        #expect(parse("2026-03-08t06:59:00z") == 1_772_953_140)
        #expect(parse("1969-12-31T23:59:59.5Z") == -1)
        #expect(parse("2024-02-29T00:00:00Z") != nil)
        for bad in ["2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-03-08T24:00:00Z", "2026-03-08T06:59:00",
                    "2026-03-08 06:59:00Z", "2026-03-08T06:59Z", "2026-03-08T06:59:00.Z", "2026-03-08T06:59:00+0100",
                    "2026-03-08T06:59:00+24:00", "", "x2026-03-08T06:59:00Z"] {
            #expect(parse(bad) == nil, "\(bad)")
        }
        var out: [UInt8] = []
        InstantText.appendUTC(WallInstant(secondsSinceEpoch: 1_772_953_140), to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "2026-03-08T06:59:00Z")
        #expect(InstantText.duration(3 * 3600 + 12 * 60) == "3h 12min")
        #expect(InstantText.duration(86400 + 1) == "1d 1s")
        #expect(InstantText.offset(-(5 * 3600)) == "-05:00")
        #expect(InstantText.offset(5 * 3600 + 45 * 60) == "+05:45")
    }
}
