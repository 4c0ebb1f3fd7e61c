import CivilTime
import SeededRandom
import Testing

/// `CivilDays.date(dayNumber:)` against Hinnant's civil-from-days written out here (signed
/// divisions, exact for every day): every day at both ends of the unsigned fast path and of
/// years −1000…10000, and seeded random days across it and beyond; and the round trip through
/// `dayNumber(year:month:day:)`.
@Suite
struct CivilDaysTests {
    static func reference(_ z0: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = yoe + era * 400
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func check(_ z: Int64, seed: UInt64? = nil) {
        let got = CivilDays.date(dayNumber: z), want = reference(z)
        if got != want {
            Issue.record("day \(z)\(seed.map { " (seed \($0))" } ?? ""): \(got), expected \(want)")
        } else if CivilDays.dayNumber(year: got.year, month: got.month, day: got.day) != z {
            Issue.record("day \(z): \(got) does not map back")
        }
    }

    @Test func everyDayAtTheEdgesAndOfYears1To10000() {
        let low: Int64 = -12_699_422, high: Int64 = 1_000_000_000
        for z in low - 800 ..< low + 50_000 { Self.check(z) }
        for z in high - 50_000 ..< high + 800 { Self.check(z) }
        let from = CivilDays.dayNumber(year: 1, month: 1, day: 1), to = CivilDays.dayNumber(year: 10001, month: 1, day: 1)
        for z in from ..< to { Self.check(z) }
    }

    @Test func seededRandomDays() {
        let seed: UInt64 = 0xC1D4_2026_1126_0001
        var random = SplitMix64(seed: seed)
        for _ in 0 ..< 50_000 {
            Self.check(Int64.random(in: -12_699_422 ..< 1_000_000_000, using: &random), seed: seed)
            Self.check(Int64.random(in: -(1 << 40) ... (1 << 40), using: &random), seed: seed)
        }
    }
}
