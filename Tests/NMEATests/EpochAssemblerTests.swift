import CivilTime
import NMEA
import Position
import Testing

/// Runs `lines` (checksums added) through an NMEAStream and returns the fixes.
func fixes(_ lines: [String], configuration: NMEAEpochAssembler.Configuration = .init()) -> [Fix] {
    var stream = NMEAStream(assembler: configuration)
    var out: [Fix] = []
    for line in lines {
        let full = line + "*" + checksumHex(String(line.dropFirst())) + "\r\n"
        Array(full.utf8).withUnsafeBytes { stream.feed($0) { out.append($0) } }
    }
    stream.finish { out.append($0) }
    return out
}

func instant(_ y: Int64, _ mo: Int, _ d: Int, _ h: Int64, _ mi: Int64, _ s: Int64) -> WallInstant {
    WallInstant(secondsSinceEpoch: CivilDays.dayNumber(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + s)
}

@Suite("epoch assembler")
struct EpochAssemblerTests {
    @Test func mergesOneEpoch() throws {
        let f = fixes([
            "$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000",
            "$GPGSA,A,3,17,28,06,01,30,20,26,13,,,,,1.8,1.1,1.5",
            "$GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A",
        ])
        #expect(f.count == 1)
        let fix = try #require(f.first)
        #expect(fix.time == instant(2014, 12, 31, 3, 7, 19))
        #expect(fix.isValid && fix.mode == .threeD)
        #expect(fix.altitudeMSL == 59.9 && fix.satellitesUsed == 8 && fix.hdop == 1.1 && fix.course == 181.39)
        #expect(close(fix.horizontalError, 1.1 * 5))
        #expect(fix.usablePosition != nil)
    }

    @Test func ggaOnlyEpochsCarryTheDateAcrossMidnight() {
        let f = fixes([
            "$GPRMC,235958.000,A,3747.0873,S,17518.8938,E,0.0,0.0,311214,,,A",
            "$GPGGA,235959.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,",
            "$GPGGA,000000.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,",
            "$GPGGA,000001.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,",
        ])
        #expect(f.map(\.time) == [instant(2014, 12, 31, 23, 59, 58), instant(2014, 12, 31, 23, 59, 59),
                                   instant(2015, 1, 1, 0, 0, 0), instant(2015, 1, 1, 0, 0, 1)])
    }

    @Test func noDateYetMeansNoTime() {
        let f = fixes(["$GPGGA,235959.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,"])
        #expect(f.count == 1 && f[0].time == nil && f[0].coordinate != nil)
    }

    @Test func zdaGivesTheDate() {
        // mr-350p.log: GGA, GSA and ZDA, no RMC.
        let f = fixes([
            "$GPGGA,193223.00,4727.2417,N,12214.1585,W,1,05,1.6,28.9,M,-17.2,M,,0000",
            "$GPZDA,193223.00,23,12,2007,00,00",
        ])
        #expect(f.first?.time == instant(2007, 12, 23, 19, 32, 23))
    }

    @Test func fractionalSeconds() {
        let f = fixes(["$GPRMC,164519.99,A,4808.9985,N,01135.0867,E,000.0,000.0,280319,003.0,E,A"])
        #expect(f.first?.time == instant(2019, 3, 28, 16, 45, 19) && f.first?.nanoseconds == 990_000_000)
    }

    @Test func invalidStatusAndQualityZero() {
        let v = fixes(["$GPRMC,120000,V,4808.9985,N,01135.0867,E,0,0,280319,,"])
        #expect(v.count == 1 && !v[0].isValid && v[0].mode == FixMode.none && v[0].usablePosition == nil)
        let q = fixes([
            "$GPRMC,120000,A,4808.9985,N,01135.0867,E,0,0,280319,,",
            "$GPGGA,120000,4808.9985,N,01135.0867,E,0,00,,,M,,M,,",
        ])
        #expect(!q[0].isValid && q[0].mode == FixMode.none)
    }

    @Test func nullIslandIsNoPosition() {
        let f = fixes(["$GPGGA,120000,0000.0000,N,00000.0000,E,1,04,2.0,0.0,M,,M,,"])
        #expect(f.count == 1 && f[0].coordinate == nil && f[0].usablePosition == nil)
    }

    @Test func gstSigmasGiveTheHorizontalError() {
        let f = fixes([
            "$GNGGA,181141.00,5230.88855,N,01327.85591,E,1,10,0.93,39.6,M,44.7,M,,",
            "$GNGST,181141.00,46,,,,4.7,1.9,5.3",
        ])
        #expect(close(f.first?.horizontalError, (4.7 * 4.7 + 1.9 * 1.9).squareRoot()))
    }

    @Test func uereIsConfigurable() {
        let f = fixes(["$GNGGA,181141.00,5230.88855,N,01327.85591,E,1,10,2.0,39.6,M,44.7,M,,"],
                      configuration: .init(uere: 3))
        #expect(close(f.first?.horizontalError, 6))
    }

    @Test func modeFromGSAWithoutAltitudeAndCarriedOver() {
        let f = fixes([
            "$GPGGA,112257.00,3844.24011,N,00908.43828,W,1,03,10.5,,,,,,",
            "$GPGSA,A,2,10,13,23,,,,,,,,,,10.5,10.5,",
            "$GPRMC,112258.00,A,3844.24011,N,00908.43828,W,0.1,339.1,220312,5.6,E,A",
        ])
        #expect(f.map(\.mode) == [.twoD, .twoD])
    }

    @Test func configurableEpochEndEmitsAtOnce() {
        var stream = NMEAStream(assembler: .init(epochEnd: .rmc))
        var out: [Fix] = []
        for line in ["$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000",
                     "$GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A"] {
            Array((line + "*" + checksumHex(String(line.dropFirst())) + "\r\n").utf8).withUnsafeBytes {
                stream.feed($0) { out.append($0) }
            }
        }
        #expect(out.count == 1)   // without waiting for the next epoch or finish
        Array("$GPGLL,3747.0873,S,17518.8938,E,030719.000,A,A*\(checksumHex("GPGLL,3747.0873,S,17518.8938,E,030719.000,A,A"))\r\n".utf8)
            .withUnsafeBytes { stream.feed($0) { out.append($0) } }
        stream.finish { out.append($0) }
        #expect(out.count == 1 && stream.counters.assembler.lateSentences == 1)
    }

    @Test func timelessPositionSentencesAreAnEpochOfTheirOwn() {
        // quectel.log: after the last fix the receiver sends empty GGA/RMC; they must not void it.
        let f = fixes([
            "$GPGGA,022038.00,3644.762563,S,17444.069733,E,1,06,1.1,53.0,M,37.0,M,,",
            "$GPRMC,022038.00,A,3644.762563,S,17444.069733,E,0.0,,071020,18.3,E,A,V",
            "$GPGGA,,,,,,0,,,,,,,,",
            "$GPRMC,,V,,,,,,,,,,N",
        ])
        #expect(f.count == 2 && f[0].isValid && f[0].mode == .threeD && !f[1].isValid)
    }
}
