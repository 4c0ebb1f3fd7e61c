// The track of a replay as drawn (SVG) and exported (GeoJSON): runs of usable positions, broken
// where no usable position came for more than `gapSeconds` — a tunnel, a receiver that lost the
// sky, a log with a hole — so that a gap is never drawn as if the vehicle had driven it.
import CivilTime
import Position

struct ReplayTrack {
    /// One point of the track.
    struct Point {
        var coordinate: Coordinate
        var time: WallInstant?
    }

    /// A break between two runs: the last point before it and the first after.
    struct Gap {
        var from: Point
        var to: Point
        var seconds: Int64
    }

    static let gapSeconds: Int64 = 30

    private(set) var runs: [[Point]] = []
    private(set) var gaps: [Gap] = []

    init(_ fixes: [Fix]) {
        var run: [Point] = []
        for f in fixes {
            guard let c = f.usablePosition else { continue }
            let p = Point(coordinate: c, time: f.time)
            if let last = run.last, let t = f.time?.secondsSinceEpoch, let l = last.time?.secondsSinceEpoch,
               t - l > Self.gapSeconds {
                runs.append(run)
                gaps.append(Gap(from: last, to: p, seconds: t - l))
                run = []
            }
            run.append(p)
        }
        if !run.isEmpty { runs.append(run) }
    }

    var first: Point? { runs.first?.first }
    var last: Point? { runs.last?.last }
}
