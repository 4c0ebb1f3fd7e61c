// `fencepost replay --svg FILE`: a map of the track, the zones and the events.
//
// Projection: equirectangular around the middle latitude (x = longitude × cos φ₀, y = −latitude),
// scaled so that the bounding box of the usable fixes and the zones fills 1000 px on its longer
// side. At the scale of a drive (tens of km) the distortion is far below a line's width. A circle
// zone is drawn with its radius converted at the same scale, so it stays a circle.
// The track is drawn as polylines, broken where there is no usable position for more than 30 s.
import CivilTime
import Position
import TrackFormats

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum ReplaySVG {
    static let size = 1000.0
    static let margin = 20.0

    static func render(fixes: [Fix], zones: [ZoneDefinition], events: [ReplayEvent], title: String) -> String {
        // Bounding box of everything drawn.
        var minLat = Double.infinity, maxLat = -Double.infinity
        var minLon = Double.infinity, maxLon = -Double.infinity
        func include(_ c: Coordinate, radius: Double = 0) {
            let dLat = radius / metresPerDegree
            let dLon = dLat / max(0.01, cos(c.latitude * .pi / 180))
            minLat = min(minLat, c.latitude - dLat); maxLat = max(maxLat, c.latitude + dLat)
            minLon = min(minLon, c.longitude - dLon); maxLon = max(maxLon, c.longitude + dLon)
        }
        for f in fixes { if let c = f.usablePosition { include(c) } }
        for z in zones {
            switch z.shape {
            case .circle(let c, let r): include(c, radius: r)
            case .polygon(let vs): vs.forEach { include($0) }
            }
        }
        if !minLat.isFinite {  // nothing to draw: an empty map around (0, 0)
            minLat = -1; maxLat = 1; minLon = -1; maxLon = 1
        }
        let k = cos((minLat + maxLat) / 2 * .pi / 180)
        let spanX = max((maxLon - minLon) * k, 1e-9), spanY = max(maxLat - minLat, 1e-9)
        let scale = (size - 2 * margin) / max(spanX, spanY)
        let width = spanX * scale + 2 * margin, height = spanY * scale + 2 * margin
        func x(_ c: Coordinate) -> String { fmt((c.longitude - minLon) * k * scale + margin) }
        func y(_ c: Coordinate) -> String { fmt((maxLat - c.latitude) * scale + margin) }
        func point(_ c: Coordinate) -> String { "\(x(c)),\(y(c))" }

        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" \
            viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="sans-serif" font-size="12">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="#fbfbf8"/>

            """
        // Zones.
        s += "<g id=\"zones\" fill=\"#3b7dd8\" fill-opacity=\"0.15\" stroke=\"#3b7dd8\" stroke-width=\"1.5\">\n"
        for z in zones {
            switch z.shape {
            case .circle(let c, let r):
                s += "<circle cx=\"\(x(c))\" cy=\"\(y(c))\" r=\"\(fmt(max(1, r / metresPerDegree * scale)))\">"
                s += "<title>\(escape(z.id)) (circle, \(fmt(r)) m)</title></circle>\n"
            case .polygon(let vs):
                s += "<polygon points=\"\(vs.map(point).joined(separator: " "))\">"
                s += "<title>\(escape(z.id)) (polygon)</title></polygon>\n"
            }
        }
        s += "</g>\n<g id=\"zone-labels\" fill=\"#1d4f91\">\n"
        for z in zones {
            let c: Coordinate
            switch z.shape {
            case .circle(let centre, _): c = centre
            case .polygon(let vs):
                c = Coordinate(
                    latitude: vs.map(\.latitude).reduce(0, +) / Double(vs.count),
                    longitude: vs.map(\.longitude).reduce(0, +) / Double(vs.count))
            }
            s += "<text x=\"\(x(c))\" y=\"\(y(c))\" text-anchor=\"middle\">\(escape(z.id))</text>\n"
        }
        s += "</g>\n"
        // Track: polylines broken at gaps.
        s += "<g id=\"track\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.2\" stroke-linejoin=\"round\">\n"
        var run: [String] = []
        var lastTime: Int64? = nil
        func flush() {
            if run.count > 1 { s += "<polyline points=\"\(run.joined(separator: " "))\"/>\n" }
            run.removeAll()
        }
        for f in fixes {
            guard let c = f.usablePosition else { continue }
            if let t = f.time?.secondsSinceEpoch, let l = lastTime, t - l > 30 { flush() }
            if let t = f.time?.secondsSinceEpoch { lastTime = t }
            run.append(point(c))
        }
        flush()
        if let first = fixes.first(where: { $0.usablePosition != nil })?.usablePosition {
            s += "<circle cx=\"\(x(first))\" cy=\"\(y(first))\" r=\"4\" fill=\"#333\"><title>start</title></circle>\n"
        }
        s += "</g>\n"
        // Events.
        s += "<g id=\"events\" stroke=\"#fff\" stroke-width=\"1\">\n"
        for e in events {
            guard let c = e.coordinate else { continue }
            let colour = switch e.kind {
            case .enter: "#2a9d3c"
            case .exit: "#d8452f"
            case .dwell: "#e0a100"
            case .unknown: "#888888"
            }
            let time = ReplayOutput.timeText(e.time, nanoseconds: e.nanoseconds)
            s += "<circle cx=\"\(x(c))\" cy=\"\(y(c))\" r=\"5\" fill=\"\(colour)\">"
            s += "<title>\(time) \(e.kind.rawValue) \(escape(e.region))</title></circle>\n"
        }
        s += "</g>\n"
        // Legend.
        let legend: [(String, String)] = [("#2a9d3c", "enter"), ("#d8452f", "exit"), ("#e0a100", "dwell")]
        s += "<g id=\"legend\">\n"
        for (i, (colour, name)) in legend.enumerated() {
            let ly = fmt(height - margin / 2 - Double(legend.count - 1 - i) * 16)
            s += "<circle cx=\"\(fmt(margin))\" cy=\"\(ly)\" r=\"5\" fill=\"\(colour)\"/>"
            s += "<text x=\"\(fmt(margin + 10))\" y=\"\(ly)\" dy=\"4\">\(name)</text>\n"
        }
        s += "</g>\n</svg>\n"
        return s
    }

    /// Metres per degree of latitude on the mean-radius sphere.
    static let metresPerDegree = Geodesy.earthRadius * .pi / 180

    /// Two decimals, no exponent.
    static func fmt(_ v: Double) -> String {
        let r = (v * 100).rounded()
        let a = Int64(abs(r))
        let frac = a % 100
        return (r < 0 ? "-" : "") + "\(a / 100)" + (frac == 0 ? "" : frac < 10 ? ".0\(frac)" : ".\(frac)")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
