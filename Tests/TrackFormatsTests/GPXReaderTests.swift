import CivilTime
import Position
import Testing
import TrackFormats
import SeededRandom

/// GPX 1.0 / 1.1 samples written here, and the errors of bad XML with their positions.
@Suite struct GPXReaderTests {
    static let gpx10 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.0" creator="GPSBabel" xmlns="http://www.topografix.com/GPX/1/0">
          <time>1970-01-01T00:00:00Z</time>
          <trk><name>drive &amp; back</name>
            <trkseg>
              <trkpt lat="51.995454300" lon="4.370550100">
                <ele>19.470</ele>
                <time>2010-02-01T12:31:38.545Z</time>
                <course>338.779999</course>
                <speed>12.050000</speed>
                <fix>none</fix>
                <sat>3</sat>
                <hdop>3.200000</hdop>
              </trkpt>
              <trkpt lat='52.0' lon='4.4'><time>2010-02-01T12:31:39Z</time><fix>2d</fix></trkpt>
              <trkpt lat="52.1" lon="4.5"/>
            </trkseg>
          </trk>
        </gpx>
        """

    @Test func gpx10WithAllFields() throws {
        let fixes = try GPXReader().fixes(Array(Self.gpx10.utf8))
        try #require(fixes.count == 3)
        let a = fixes[0]
        #expect(a.coordinate == Coordinate(latitude: 51.9954543, longitude: 4.3705501))
        #expect(a.altitudeMSL == 19.47)
        #expect(a.time == WallInstant(secondsSinceEpoch: 1_265_027_498))
        #expect(a.nanoseconds == 545_000_000)
        #expect(a.course == 338.779999 && a.speed == 12.05)
        #expect(a.mode == .none && !a.isValid && a.usablePosition == nil)
        #expect(a.satellitesUsed == 3 && a.hdop == 3.2)
        #expect(a.horizontalError == 3.2 * GPXReader.defaultUERE)
        #expect(fixes[1].mode == .twoD && fixes[1].isValid && fixes[1].horizontalError == nil)
        #expect(fixes[1].time == WallInstant(secondsSinceEpoch: 1_265_027_499))
        // No fix element: a logger writes a point only when it has one.
        #expect(fixes[2].mode == .threeD && fixes[2].isValid && fixes[2].time == nil && fixes[2].speed == nil)
    }

    @Test func gpx11WithPrefixesExtensionsCommentsAndCDATA() throws {
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [ <!ENTITY x "y"> ]>
            <!-- a comment with <tags> inside -->
            <g:gpx version="1.1" creator="test" xmlns:g="http://www.topografix.com/GPX/1/1"
                   xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2">
              <g:metadata><g:desc><![CDATA[<not a tag> & fine]]></g:desc></g:metadata>
              <g:wpt lat="1" lon="1"><g:time>2020-01-01T00:00:00Z</g:time></g:wpt>
              <g:trk><g:trkseg>
                <g:trkpt lat="-33.5" lon="151.25">
                  <g:time>2020-05-08T10:00:00+02:00</g:time>
                  <!-- between -->
                  <g:extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>7.5</gpxtpx:speed>
                    <gpxtpx:course>90</gpxtpx:course></gpxtpx:TrackPointExtension></g:extensions>
                  <g:fix>dgps</g:fix><g:hdop> 1.0 </g:hdop>
                </g:trkpt>
              </g:trkseg><g:trkseg>
                <g:trkpt lat="-33.6" lon="151.3"><g:speed>3</g:speed><g:extensions><x:speed xmlns:x="u">9</x:speed></g:extensions></g:trkpt>
              </g:trkseg></g:trk>
            </g:gpx>
            """
        let fixes = try GPXReader(uere: 4).fixes(Array(text.utf8))
        try #require(fixes.count == 2, "the waypoint is not a track point")
        #expect(fixes[0].coordinate == Coordinate(latitude: -33.5, longitude: 151.25))
        #expect(fixes[0].time == WallInstant(secondsSinceEpoch: 1_588_924_800))  // 08:00Z
        #expect(fixes[0].speed == 7.5 && fixes[0].course == 90)
        #expect(fixes[0].mode == .threeD && fixes[0].horizontalError == 4)
        #expect(fixes[1].speed == 3, "the point's own speed wins over an extension's")
    }

    @Test func gpx11WithoutNamespacesAndEntities() throws {
        let text = #"<gpx version="1.1"><trk><trkseg><trkpt lat="&#52;5.5" lon="-77.&#x37;"><ele>1e2</ele></trkpt></trkseg></trk></gpx>"#
        let fixes = try GPXReader().fixes(Array(text.utf8))
        #expect(fixes.map(\.coordinate) == [Coordinate(latitude: 45.5, longitude: -77.7)])
        #expect(fixes[0].altitudeMSL == 100)
    }

    func error(_ text: String) -> XMLError? {
        do { _ = try GPXReader().fixes(Array(text.utf8)); return nil } catch { return error }
    }

    @Test func badXMLIsAnErrorWithLineAndColumn() throws {
        let mismatched = "<gpx version=\"1.0\">\n <trk>\n  <trkseg>\n  </trk>\n</gpx>"
        let e = try #require(error(mismatched))
        #expect(e.line == 4 && e.column == 3)
        #expect(e.message == "expected </trkseg>, found </trk>")
        #expect(e.description == "line 4, column 3: expected </trkseg>, found </trk>")

        let truncated = "<gpx version=\"1.0\">\n<trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\">"
        #expect(error(truncated)?.message == "end of file inside <trkpt>: the document is truncated")
        #expect(error(truncated)?.line == 3)

        #expect(error("<gpx version=\"1.0\"><trk a=1/></gpx>")?.message.contains("in quotes") == true)
        #expect(error("<gpx version=\"1.0\">\n  &nbsp;</gpx>").map { ($0.line, $0.column, $0.message) }! == (2, 3, "unknown entity &nbsp;"))
        #expect(error("<gpx version=\"1.0\"><!-- open </gpx>")?.message == "unterminated comment")
        #expect(error("<gpx version=\"1.0\"></gpx><gpx/>")?.message == "a second root element")
        #expect(error("")?.message == "no root element: this is not an XML document")
        #expect(error("<kml></kml>")?.message == "the root element is <kml>, expected <gpx>")
        #expect(error("<gpx a=\"1\" a=\"2\"></gpx>")?.message == "the attribute a occurs twice in <gpx>")
    }

    @Test func badValuesAreErrorsWithTheirPlace() throws {
        func wrap(_ point: String) -> String { "<gpx version=\"1.1\"><trk><trkseg>\n" + point + "\n</trkseg></trk></gpx>" }
        let e1 = try #require(error(wrap(#"<trkpt lat="91" lon="0"/>"#)))
        #expect(e1.line == 2 && e1.column == 1 && e1.message == "<trkpt> lat=91.0 is outside -90...90")
        #expect(error(wrap(#"<trkpt lon="0"/>"#))?.message == "<trkpt> has no lat attribute")
        #expect(error(wrap(#"<trkpt lat="x" lon="0"/>"#))?.message == #"<trkpt> lat="x" is not a number"#)
        let e2 = try #require(error(wrap("<trkpt lat=\"1\" lon=\"2\">\n  <time>yesterday</time></trkpt>")))
        #expect(e2.line == 3 && e2.column == 3)
        #expect(e2.message.hasPrefix(#"<time> "yesterday" is not a timestamp"#))
        #expect(error(wrap(#"<trkpt lat="1" lon="2"><fix>4d</fix></trkpt>"#))?.message.contains("4d") == true)
        #expect(error(#"<gpx version="2.0"></gpx>"#)?.message == "GPX version 2.0 is not supported (1.0 and 1.1 are)")
    }

    @Test func timestamps() {
        func parse(_ s: String) -> (WallInstant, Int32)? {
            guard case let .success(r) = RFC3339.parse(s.utf8, lenient: true) else { return nil }
            return (r.instant, r.nanoseconds)
        }
        #expect(parse("2011-09-15T05:12:03Z")! == (WallInstant(secondsSinceEpoch: 1_316_063_523), 0))
        #expect(parse("2011-09-15T05:12:03.5")!.1 == 500_000_000)
        #expect(parse("2011-09-15T07:12:03+02:00")!.0 == WallInstant(secondsSinceEpoch: 1_316_063_523))
        #expect(parse("2011-02-30T00:00:00Z") == nil)
        #expect(parse("2011-09-15") == nil)
    }

    @Test func detectsXML() {
        #expect(GPXReader.looksLikeXML(Array("\u{FEFF}  \n<?xml".utf8)))
        #expect(!GPXReader.looksLikeXML(Array("$GPGGA,".utf8)))
        #expect(!GPXReader.looksLikeXML([UInt8]()))
    }
}

/// Mangled documents: every mutation either reads or is refused with a position inside the text;
/// nothing traps. Seeded; a failure prints its seed.
@Suite struct GPXMutationTests {
    @Test func mutationsNeverTrap() {
        let base = Array(GPXReaderTests.gpx10.utf8)
        let alphabet = Array("<>/&;\"'=![]-?:#x \n".utf8) + [0x00, 0xC3, 0xFF]
        for seed in UInt64(1)...3000 {
            var rng = SplitMix64(seed: seed)
            var doc = base
            for _ in 0...rng.below(4) {
                let i = rng.below(doc.count)
                switch rng.below(3) {
                case 0: doc[i] = alphabet[rng.below(alphabet.count)]
                case 1: doc.remove(at: i)
                default: doc.insert(alphabet[rng.below(alphabet.count)], at: i)
                }
            }
            if rng.below(4) == 0 { doc.removeLast(rng.below(doc.count)) }
            do {
                _ = try GPXReader().fixes(doc)
            } catch {
                let lines = doc.split(separator: 0x0A, omittingEmptySubsequences: false).count
                #expect(error.line >= 1 && error.line <= lines && error.column >= 1, "seed \(seed): \(error)")
            }
        }
    }
}

extension SplitMix64 {
    /// A value in `0 ..< n`, by modulo (slightly biased; fine for picking mutation sites).
    fileprivate mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
