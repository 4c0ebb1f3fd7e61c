import NMEA
import Position
import Testing

/// Frames and decodes one line (checksum computed here when `*` is absent).
func decode(_ line: String) -> (talker: NMEATalker, report: NMEAReport)? {
    let full = line.contains("*") ? line : line + "*" + checksumHex(String(line.dropFirst()))
    var framer = NMEAFramer()
    var decoder = NMEADecoder()
    var out: (NMEATalker, NMEAReport)?
    Array((full + "\r\n").utf8).withUnsafeBytes { bytes in
        framer.feed(bytes) { out = decoder.decode($0) }
    }
    return out
}

func decoderCounters(_ lines: [String]) -> NMEADecoderCounters {
    var framer = NMEAFramer()
    var decoder = NMEADecoder()
    for line in lines {
        Array((line + "*" + checksumHex(String(line.dropFirst())) + "\r\n").utf8).withUnsafeBytes { bytes in
            framer.feed(bytes) { _ = decoder.decode($0) }
        }
    }
    return decoder.counters
}

func close(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}

@Suite("decoders")
struct DecoderTests {
    @Test func gga() throws {
        let r = try #require(decode("$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000*7D"))
        #expect(r.talker == .gps)
        guard case .gga(let g) = r.report else { Issue.record("not GGA"); return }
        #expect(g.time == NMEATimeOfDay(secondOfDay: 3 * 3600 + 7 * 60 + 19))
        #expect(close(g.coordinate?.latitude, -(37 + 47.0873 / 60)))
        #expect(close(g.coordinate?.longitude, 175 + 18.8938 / 60))
        #expect(g.quality == 1 && g.satellitesUsed == 8)
        #expect(g.hdop == 1.1 && g.altitudeMSL == 59.9)
    }

    @Test func ggaWithoutFix() throws {
        let r = try #require(decode("$GPGGA,,,,,,0,00,,,M,,M,,*66"))
        guard case .gga(let g) = r.report else { Issue.record("not GGA"); return }
        #expect(g.time == nil && g.coordinate == nil && g.quality == 0 && g.altitudeMSL == nil)
    }

    @Test func ggaHighPrecision() throws {
        // ublox-f9p-hpnmea.log: 7 decimals of minutes.
        let r = try #require(decode("$GNGGA,014500.00,4404.1306024,N,12118.8446777,W,1,12,0.58,1112.345,M,-21.3,M,,"))
        guard case .gga(let g) = r.report else { Issue.record("not GGA"); return }
        #expect(close(g.coordinate?.latitude, 44 + 4.1306024 / 60, 1e-12))
        #expect(close(g.coordinate?.longitude, -(121 + 18.8446777 / 60), 1e-12))
        #expect(r.talker == .combined)
    }

    @Test func rmc() throws {
        let r = try #require(decode("$GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A*7D"))
        guard case .rmc(let m) = r.report else { Issue.record("not RMC"); return }
        #expect(m.isValid)
        #expect(m.date == NMEADate(year: 2014, month: 12, day: 31))
        #expect(close(m.speed, 0.69 * 1852 / 3600))
        #expect(m.course == 181.39)
    }

    @Test func rmcVoidAndFaaNotValid() throws {
        let v = try #require(decode("$GPRMC,,V,,,,,,,,,,N*53"))
        guard case .rmc(let a) = v.report else { Issue.record("not RMC"); return }
        #expect(!a.isValid && a.time == nil && a.date == nil && a.coordinate == nil)
        let n = try #require(decode("$GNRMC,074150.799,A,3114.8770,N,12135.2463,E,0.30,4.94,250215,,,N"))
        guard case .rmc(let b) = n.report else { Issue.record("not RMC"); return }
        #expect(!b.isValid)
    }

    @Test func rmcOldCenturyAndBadDate() throws {
        let r = try #require(decode("$GPRMC,225308,A,4527.458,S,16709.165,E,000.0,094.5,060601,024.1,E*6D"))
        guard case .rmc(let m) = r.report else { Issue.record("not RMC"); return }
        #expect(m.date == NMEADate(year: 2001, month: 6, day: 6))
        #expect(decode("$GPRMC,000231.099,A,4829.0005,N,00022.0015,E,0.15,212.28,2208-1,,,A*73") == nil)
        #expect(decode("$GPRMC,000231.42,A,4829.0005,N,00022.0016,E,0.16,212.28,220899,,,A*59").map {
            if case .rmc(let m) = $0.report { m.date == NMEADate(year: 1999, month: 8, day: 22) } else { false }
        } == true)
    }

    @Test func rmcOddAuxiliaryFieldsDoNotRejectTheFix() throws {
        // meinberg-gps164.log style, with a garbage course.
        let r = try #require(decode("$GPRMC,220952.00,A,4742.21,N,01200.75,E,0.0,x.y,181223,0.0,E"))
        guard case .rmc(let m) = r.report else { Issue.record("not RMC"); return }
        #expect(m.course == nil && m.coordinate != nil)
    }

    @Test func gll() throws {
        let r = try #require(decode("$GPGLL,5547.82107,N,02334.14132,E,152504.50,A,A*67"))
        guard case .gll(let g) = r.report else { Issue.record("not GLL"); return }
        #expect(g.isValid && g.time == NMEATimeOfDay(secondOfDay: 15 * 3600 + 25 * 60 + 4, nanoseconds: 500_000_000))
        #expect(close(g.coordinate?.latitude, 55 + 47.82107 / 60))
        let v = try #require(decode("$GPGLL,3854.5087,N,07726.4523,W,125106,V,S*55"))
        guard case .gll(let w) = v.report else { Issue.record("not GLL"); return }
        #expect(!w.isValid && close(w.coordinate?.longitude, -(77 + 26.4523 / 60)))
    }

    @Test func gsa() throws {
        let r = try #require(decode("$GPGSA,A,3,17,28,06,01,30,20,26,13,,,,,1.8,1.1,1.5*33"))
        #expect(r.report == .gsa(NMEAGSA(mode: .threeD, pdop: 1.8, hdop: 1.1, vdop: 1.5)))
        let n = try #require(decode("$GPGSA,A,1,,,,,,,,,,,,,,,,*32"))
        #expect(n.report == .gsa(NMEAGSA(mode: FixMode.none, pdop: nil, hdop: nil, vdop: nil)))
    }

    @Test func gst() throws {
        let r = try #require(decode("$GNGST,181141.00,46,,,,4.7,1.9,5.3*4A"))
        #expect(r.report == .gst(NMEAGST(time: NMEATimeOfDay(secondOfDay: 18 * 3600 + 11 * 60 + 41), rms: 46,
                                          latitudeSigma: 4.7, longitudeSigma: 1.9, altitudeSigma: 5.3)))
    }

    @Test func vtg() throws {
        let r = try #require(decode("$GPVTG,221.54,T,,M,32.000,N,59.295,K,A*3E"))
        guard case .vtg(let v) = r.report else { Issue.record("not VTG"); return }
        #expect(v.course == 221.54 && close(v.speed, 32 * 1852 / 3600))
    }

    @Test func zda() throws {
        let r = try #require(decode("$GPZDA,193223.00,23,12,2007,00,00*69"))
        #expect(r.report == .zda(NMEAZDA(time: NMEATimeOfDay(secondOfDay: 19 * 3600 + 32 * 60 + 23),
                                          date: NMEADate(year: 2007, month: 12, day: 23))))
        // ublox-lea-4h.log: ZDA before the receiver knows the date.
        let empty = try #require(decode("$GPZDA,000021.00,,,,00,00"))
        guard case .zda(let z) = empty.report else { Issue.record("not ZDA"); return }
        #expect(z.date == nil)
    }

    @Test func gns() throws {
        let r = try #require(decode("$GNGNS,074155.799,3114.8770,N,12135.2463,E,ANNA,05,1.3,156.9,8.3,,0000*52"))
        guard case .gns(let g) = r.report else { Issue.record("not GNS"); return }
        #expect(g.isValid && g.satellitesUsed == 5 && g.hdop == 1.3 && g.altitudeMSL == 156.9)
        let n = try #require(decode("$GNGNS,074150.799,,,,,NNNN,00,,,0.0,,0000*63"))
        guard case .gns(let h) = n.report else { Issue.record("not GNS"); return }
        #expect(!h.isValid && h.coordinate == nil)
    }

    @Test func talkers() {
        for (talker, expected) in [("GP", NMEATalker.gps), ("GN", .combined), ("GL", .glonass), ("GA", .galileo),
                                   ("GB", .beidou), ("BD", .beidou), ("QZ", .qzss)] {
            #expect(decode("$\(talker)GSA,A,3,17,28,06,01,30,20,26,13,,,,,1.8,1.1,1.5")?.talker == expected)
        }
    }

    @Test func skippedSentencesAreCounted() {
        let c = decoderCounters([
            "$GPGSV,3,3,12,11,12,132,04,08,38,008,,02,35,348,,03,14,091,",  // unsupported type
            "$PGRME,17.4,M,40.3,M,43.9,M",                                  // proprietary
            "$GYGGA,1,2,3",                                                 // other talker
            "$GYOACC,1,2,3",                                                // 6-letter address (unicore-um621.log)
            "$GPGGA,030719.000,3747.0873",                                  // too few fields
            "$GPGGA,99x719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000",  // bad time
            "$GPGGA,030719.000,3747.0873,Q,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000",  // bad hemisphere
            "$GPRMC,030719.000,A,3790.0000,S,17518.8938,E,0.69,181.39,311214,,,A",      // minutes ≥ 60
            "$GPG",                                                         // malformed address
            "$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000",  // fine
        ])
        #expect(c.unsupportedType == 1 && c.proprietary == 1 && c.ignoredTalker == 1)
        #expect(c.tooFewFields == 1 && c.invalidFields == 3 && c.malformedAddress == 2 && c.decoded == 1)
    }
}
