import CivilTime
import Foundation
import NMEA
import Position
import Testing

/// Receiver dates read against the build's date: two-digit RMC years and the GPS week rollover.
@Suite struct ReceiverDatesTests {
    static func rmcDate(_ ddmmyy: String) throws -> NMEADate? {
        let r = try #require(decode("$GPRMC,120000.00,A,5114.6178,N,00644.5146,E,0.0,0.0,\(ddmmyy),,,A"))
        guard case .rmc(let rmc) = r.report else { Issue.record("not RMC"); return nil }
        return rmc.date
    }

    /// The century of a two-digit year pivots on the build's year (2026: 1996 … 2095), so that
    /// 2080 is not read as 1980, while recorded logs of 1996–1999 keep their century.
    @Test func twoDigitYearsPivotOnTheBuildYear() throws {
        #expect(ReceiverDates.buildYear == 2026)   // the cases below are for this build's window
        #expect(try Self.rmcDate("150680")?.year == 2080)
        #expect(try Self.rmcDate("010195")?.year == 2095)
        #expect(try Self.rmcDate("220899")?.year == 1999)
        #expect(try Self.rmcDate("010196")?.year == 1996)
        #expect(try Self.rmcDate("261126")?.year == 2026)
        #expect(try Self.rmcDate("070709")?.year == 2009)
        for yy in 0 ..< 100 {
            let y = ReceiverDates.year(twoDigit: yy)
            #expect(y % 100 == yy && y >= 1996 && y < 2096, "\(yy) → \(y)")
        }
    }

    /// A date 1024·k weeks before the build's is moved forward by whole periods to the first one
    /// not before the build's date; later dates and pre-GPS defaults are left alone.
    @Test func weekRolloverDatesAreMovedForward() {
        let build = ReceiverDates.buildDay * 86_400
        let week1024 = ReceiverDates.rolloverSeconds
        // The true time a day after the build, as a buggy receiver reports it, one and two periods back.
        let truth = build + 86_400 + 3723
        for k in 1 ... 2 {
            let (t, periods) = ReceiverDates.correctingWeekRollover(WallInstant(secondsSinceEpoch: truth - Int64(k) * week1024))
            #expect(t.secondsSinceEpoch == truth && periods == k, "k \(k): \(t), \(periods)")
        }
        // April 2019's rollover seen by a 1999-based receiver (gpsd's april6_2019.log): 1999-08-22
        // is 2038-11-21 for a 2026 build (2019-04-07 is before the build, so one more period).
        let (t1999, p1999) = ReceiverDates.correctingWeekRollover(WallInstant(secondsSinceEpoch: 935_280_151))
        #expect(p1999 == 2 && t1999.secondsSinceEpoch == 935_280_151 + 2 * week1024)
        for s in [build, build + 1, build + 400 * 86_400, 315_964_799 /* 1980-01-05: before GPS week 0 */, 0] {
            let (t, periods) = ReceiverDates.correctingWeekRollover(WallInstant(secondsSinceEpoch: s))
            #expect(t.secondsSinceEpoch == s && periods == 0, "\(s)")
        }
    }

    /// The build's date is a constant moved forward at each release: never in the future; a
    /// reminder (not a failure) when it is over a year old.
    @Test func buildDateIsNotInTheFuture() {
        let today = Int64(Date().timeIntervalSince1970) / 86_400
        #expect(ReceiverDates.buildDay <= today, "ReceiverDates.buildDay is after today")
        if today - ReceiverDates.buildDay > 365 {
            print("ReceiverDates.buildDay is \(today - ReceiverDates.buildDay) days old: move it forward (Sources/Position/ReceiverDates.swift)")
        }
        let civil = CivilDays.date(dayNumber: ReceiverDates.buildDay)
        #expect(Int(civil.year) == ReceiverDates.buildYear)
    }
}
