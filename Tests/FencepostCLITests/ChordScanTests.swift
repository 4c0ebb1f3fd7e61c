import FencepostBenchHarness
import Geofencing
import Position
import Testing

/// The bench's fair brute force (ChordScan) answers what the index answers, query by query, and
/// what the haversine scan answers (the seeded points are nowhere within rounding of a boundary).
@Suite struct ChordScanTests {
    @Test(arguments: [(20, GeofenceWorkload.Spread.uniform), (301, .uniform), (1_000, .clustered), (3, .clustered)])
    func sameCountsAsTheIndexAndTheHaversineScan(count: Int, spread: GeofenceWorkload.Spread) {
        let circles = GeofenceWorkload.circles(count: count, spread: spread)
        let scan = ChordScan(circles)
        #expect(scan.count == count)
        let index = GeofenceWorkload.index(circles)
        let points = GeofenceWorkload.queries(count: 1024, spread: spread, near: circles)
        var results: [Int32] = []
        var inside = 0, differences: [String] = []
        for (i, p) in points.enumerated() {
            index.query(p, into: &results)
            let chord = scan.count(containing: p), haversine = GeofenceWorkload.bruteForceCount(circles, p)
            inside += chord
            if chord != results.count || chord != haversine {
                differences.append("point \(i): chord \(chord), index \(results.count), haversine \(haversine)")
            }
        }
        #expect(differences.isEmpty, "\(count) \(spread): \(differences.prefix(5))")
        // Half the points lie within 1.5 radii of a circle: about 1 in 2.25 of those is inside.
        #expect(inside > points.count / 8, "\(inside) hits")
    }
}
