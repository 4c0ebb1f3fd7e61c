// `fencepost replay --svg FILE`: a map of the track, the zones and the events that a person can
// read without a basemap: a scale bar and a north arrow, start and end markers, arrows in the
// direction of travel, each event's time beside it, labels placed where they hit neither a dot, another
// label nor the edge, gaps in the fixes drawn as dashed lines, and a legend of only what occurs.
//
// Projection: equirectangular around the middle latitude (x = longitude × cos φ₀, y = −latitude),
// scaled so that the bounding box of the usable fixes and the zones fills `size` px on its longer
// side. At the scale of a drive (tens of km) the distortion is far below a line's width. A circle
// zone is drawn with its radius converted at the same scale, so it stays a circle; north is up.
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
    /// Room around the drawing for labels, the legend, the scale bar and the north arrow.
    static let margin = 70.0
    static let fontSize = 11.0
    /// Estimated advance of one character at `fontSize` (sans-serif, mostly digits and lower case).
    static let charWidth = 6.4

    /// An axis-aligned box in pixels, for collision tests.
    struct Box {
        var x0, y0, x1, y1: Double
        func intersects(_ b: Box) -> Bool { x0 < b.x1 && b.x0 < x1 && y0 < b.y1 && b.y0 < y1 }
        func inside(width: Double, height: Double) -> Bool { x0 >= 2 && y0 >= 2 && x1 <= width - 2 && y1 <= height - 2 }
    }

    /// Places labels one after another: each at the first candidate position around its anchor that
    /// overlaps no placed label, no dot and no reserved box and stays inside the picture.
    struct LabelPlacer {
        var taken: [Box] = []
        let width: Double, height: Double

        /// The text's baseline origin and anchor, or nil when no candidate fits (the label is left
        /// out; the dot keeps its hover title).
        mutating func place(_ text: String, at x: Double, _ y: Double, clearance: Double) -> (x: Double, y: Double, anchor: String)? {
            let w = Double(text.count) * ReplaySVG.charWidth, h = ReplaySVG.fontSize + 2
            for distance in [clearance + 3, clearance + 14, clearance + 28, clearance + 46] {
                // right, left, above, below, then the diagonals.
                let candidates: [(Double, Double)] = [(1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1)]
                for (dx, dy) in candidates {
                    let cx = x + dx * distance, cy = y + dy * distance
                    let x0 = dx > 0 ? cx : dx < 0 ? cx - w : cx - w / 2
                    let y0 = dy > 0 ? cy : dy < 0 ? cy - h : cy - h / 2
                    let box = Box(x0: x0, y0: y0, x1: x0 + w, y1: y0 + h)
                    guard box.inside(width: width, height: height), !taken.contains(where: { $0.intersects(box) }) else { continue }
                    taken.append(box)
                    return (x0, y0 + h - 3, "start")
                }
            }
            return nil
        }
    }

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
            case .polygon(let parts): for rings in parts { for ring in rings { ring.forEach { include($0) } } }
            }
        }
        if !minLat.isFinite {  // nothing to draw: an empty map around (0, 0)
            minLat = -1; maxLat = 1; minLon = -1; maxLon = 1
        }
        let track = ReplayTrack(fixes)
        // The legend sits above the drawing (only what occurs on this map).
        var legendItems: [(kind: String, label: String)] = []
        if !zones.isEmpty { legendItems.append(("zone", "zone")) }
        if !track.runs.isEmpty { legendItems.append(("track", "track, arrows in the direction of travel")) }
        if !track.gaps.isEmpty { legendItems.append(("gap", "gap in the fixes (over \(ReplayTrack.gapSeconds) s)")) }
        if track.first != nil { legendItems.append(("start", "start")); legendItems.append(("end", "end")) }
        for kind in [ReplayEvent.Kind.enter, .exit, .dwell, .unknown] where events.contains(where: { $0.kind == kind }) {
            legendItems.append((kind.rawValue, kind.rawValue))
        }
        let top = 16 + Double(legendItems.count) * 16   // room above the drawing for the legend
        let k = cos((minLat + maxLat) / 2 * .pi / 180)
        let spanX = max((maxLon - minLon) * k, 1e-9), spanY = max(maxLat - minLat, 1e-9)
        let scale = size / max(spanX, spanY)   // px per degree of latitude
        let width = spanX * scale + 2 * margin, height = spanY * scale + 2 * margin + top
        func px(_ c: Coordinate) -> (x: Double, y: Double) {
            ((c.longitude - minLon) * k * scale + margin, (maxLat - c.latitude) * scale + margin + top)
        }
        func point(_ c: Coordinate) -> String { let p = px(c); return "\(fmt(p.x)),\(fmt(p.y))" }
        let located = events.filter { $0.coordinate != nil }
        var placer = LabelPlacer(width: width, height: height)

        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" \
            viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="sans-serif" font-size="\(fmt(fontSize))">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="#fbfbf8"/>

            """
        let legendWidth = 28 + Double(legendItems.map(\.label.count).max() ?? 0) * charWidth
        let legendBox = Box(x0: 4, y0: 4, x1: 12 + legendWidth, y1: 12 + Double(legendItems.count) * 16)
        let northBox = Box(x0: width - 40, y0: 4, x1: width - 4, y1: 56)
        let scaleBox = Box(x0: 4, y0: height - 34, x1: 240, y1: height - 4)
        placer.taken += [legendBox, northBox, scaleBox]
        // Dots are obstacles for every label.
        for e in located { let p = px(e.coordinate!); placer.taken.append(Box(x0: p.x - 6, y0: p.y - 6, x1: p.x + 6, y1: p.y + 6)) }
        let ends = [track.first, track.last].compactMap { $0 }
        for e in ends { let p = px(e.coordinate); placer.taken.append(Box(x0: p.x - 7, y0: p.y - 7, x1: p.x + 7, y1: p.y + 7)) }

        // Zones.
        s += "<g id=\"zones\" fill=\"#3b7dd8\" fill-opacity=\"0.15\" stroke=\"#3b7dd8\" stroke-width=\"1.5\">\n"
        for z in zones {
            switch z.shape {
            case .circle(let c, let r):
                let p = px(c)
                s += "<circle cx=\"\(fmt(p.x))\" cy=\"\(fmt(p.y))\" r=\"\(fmt(max(1, r / metresPerDegree * scale)))\">"
                s += "<title>\(escape(z.id)) (circle, \(fmt(r)) m)</title></circle>\n"
            case .polygon(let parts):
                // One path of every ring of every part; even-odd fill leaves the holes open.
                let d = parts.flatMap { $0 }.map { ring in "M " + ring.map(point).joined(separator: " L ") + " Z" }.joined(separator: " ")
                let holes = parts.reduce(0) { $0 + $1.count - 1 }
                var what = "polygon"
                if parts.count > 1 { what += ", \(parts.count) parts" }
                if holes > 0 { what += ", \(holes) hole\(holes == 1 ? "" : "s")" }
                s += "<path fill-rule=\"evenodd\" d=\"\(d)\">"
                s += "<title>\(escape(z.id)) (\(what))</title></path>\n"
            }
        }
        s += "</g>\n"
        // Track: one polyline per run, dashed lines over the gaps, arrows along the way.
        s += "<g id=\"track\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.4\" stroke-linejoin=\"round\">\n"
        for run in track.runs where run.count > 1 {
            s += "<polyline points=\"\(run.map { point($0.coordinate) }.joined(separator: " "))\"/>\n"
        }
        s += "</g>\n<g id=\"gaps\" fill=\"none\" stroke=\"#999\" stroke-width=\"1.4\" stroke-dasharray=\"5 4\">\n"
        for g in track.gaps {
            s += "<line x1=\"\(fmt(px(g.from.coordinate).x))\" y1=\"\(fmt(px(g.from.coordinate).y))\" "
            s += "x2=\"\(fmt(px(g.to.coordinate).x))\" y2=\"\(fmt(px(g.to.coordinate).y))\"><title>no usable fix for \(g.seconds) s</title></line>\n"
        }
        s += "</g>\n<g id=\"direction\" fill=\"#333\">\n"
        for run in track.runs {
            var travelled = 0.0, next = 60.0
            for (a, b) in zip(run, run.dropFirst()) {
                let p = px(a.coordinate), q = px(b.coordinate)
                let d = hypot(q.x - p.x, q.y - p.y)
                guard d > 0 else { continue }
                while travelled + d >= next {
                    let t = (next - travelled) / d
                    let x = p.x + (q.x - p.x) * t, y = p.y + (q.y - p.y) * t
                    let angle = atan2(q.y - p.y, q.x - p.x) * 180 / .pi
                    s += "<path d=\"M 5 0 L -4 -3.5 L -4 3.5 Z\" transform=\"translate(\(fmt(x)) \(fmt(y))) rotate(\(fmt(angle)))\"/>\n"
                    next += 120
                }
                travelled += d
            }
        }
        s += "</g>\n"
        // Start and end.
        s += "<g id=\"ends\">\n"
        var endLabels: [(String, Double, Double)] = []
        if let a = track.first {
            let p = px(a.coordinate)
            s += "<circle id=\"start\" cx=\"\(fmt(p.x))\" cy=\"\(fmt(p.y))\" r=\"6\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"2.5\"><title>start</title></circle>\n"
            endLabels.append(("start" + (a.time.map { " " + clock($0) } ?? ""), p.x, p.y))
        }
        if let b = track.last {
            let p = px(b.coordinate)
            s += "<rect id=\"end\" x=\"\(fmt(p.x - 6))\" y=\"\(fmt(p.y - 6))\" width=\"12\" height=\"12\" fill=\"#333\"><title>end</title></rect>\n"
            endLabels.append(("end" + (b.time.map { " " + clock($0) } ?? ""), p.x, p.y))
        }
        s += "</g>\n"
        // Events.
        s += "<g id=\"events\" stroke=\"#fff\" stroke-width=\"1\">\n"
        for e in located {
            let p = px(e.coordinate!)
            let time = ReplayOutput.timeText(e.time, nanoseconds: e.nanoseconds)
            s += "<circle cx=\"\(fmt(p.x))\" cy=\"\(fmt(p.y))\" r=\"5\" fill=\"\(colour(e.kind))\">"
            s += "<title>\(time) \(e.kind.rawValue) \(escape(e.region))</title></circle>\n"
        }
        s += "</g>\n"
        // Labels: events (time, event, zone), start and end, then zone names, each where it fits.
        s += "<g id=\"labels\" fill=\"#222\">\n"
        for e in located {
            let p = px(e.coordinate!)
            let text = "\(clock(e.time)) \(e.kind.rawValue) \(e.region)"
            if let at = placer.place(text, at: p.x, p.y, clearance: 6) {
                s += "<text x=\"\(fmt(at.x))\" y=\"\(fmt(at.y))\">\(escape(text))</text>\n"
            }
        }
        for (text, x, y) in endLabels {
            if let at = placer.place(text, at: x, y, clearance: 7) {
                s += "<text x=\"\(fmt(at.x))\" y=\"\(fmt(at.y))\" font-weight=\"bold\">\(escape(text))</text>\n"
            }
        }
        s += "</g>\n<g id=\"zone-labels\" fill=\"#1d4f91\">\n"
        for z in zones {
            let c: Coordinate
            switch z.shape {
            case .circle(let centre, _): c = centre
            case .polygon(let parts):
                // The mean of the first part's outer ring.
                let vs = parts[0][0]
                c = Coordinate(latitude: vs.map(\.latitude).reduce(0, +) / Double(vs.count),
                               longitude: vs.map(\.longitude).reduce(0, +) / Double(vs.count))
            }
            let p = px(c)
            if let at = placer.place(z.id, at: p.x, p.y, clearance: 0) {
                s += "<text x=\"\(fmt(at.x))\" y=\"\(fmt(at.y))\">\(escape(z.id))</text>\n"
            }
        }
        s += "</g>\n"
        // Legend: only what occurs on this map.
        s += "<g id=\"legend\">\n<rect x=\"4\" y=\"4\" width=\"\(fmt(legendBox.x1 - 4))\" height=\"\(fmt(legendBox.y1 - 4))\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n"
        for (i, item) in legendItems.enumerated() {
            let y = 20 + Double(i) * 16
            switch item.kind {
            case "zone": s += "<rect x=\"12\" y=\"\(fmt(y - 5))\" width=\"12\" height=\"10\" fill=\"#3b7dd8\" fill-opacity=\"0.15\" stroke=\"#3b7dd8\"/>"
            case "track": s += "<line x1=\"10\" y1=\"\(fmt(y))\" x2=\"26\" y2=\"\(fmt(y))\" stroke=\"#333\" stroke-width=\"1.4\"/>"
            case "gap": s += "<line x1=\"10\" y1=\"\(fmt(y))\" x2=\"26\" y2=\"\(fmt(y))\" stroke=\"#999\" stroke-width=\"1.4\" stroke-dasharray=\"5 4\"/>"
            case "start": s += "<circle cx=\"18\" cy=\"\(fmt(y))\" r=\"5\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"2\"/>"
            case "end": s += "<rect x=\"13\" y=\"\(fmt(y - 5))\" width=\"10\" height=\"10\" fill=\"#333\"/>"
            default: s += "<circle cx=\"18\" cy=\"\(fmt(y))\" r=\"5\" fill=\"\(colour(ReplayEvent.Kind(rawValue: item.kind) ?? .unknown))\"/>"
            }
            s += "<text x=\"32\" y=\"\(fmt(y + 4))\">\(escape(item.label))</text>\n"
        }
        s += "</g>\n"
        // North arrow (north is up in this projection).
        s += """
            <g id="north-arrow" transform="translate(\(fmt(width - 22)) 10)">\
            <path d="M 0 0 L 8 26 L 0 20 L -8 26 Z" fill="#333"/>\
            <text x="0" y="42" text-anchor="middle" font-weight="bold">N</text></g>

            """
        // Scale bar: a round length near a fifth of the width.
        let pxPerMetre = scale / metresPerDegree
        let metres = niceLength(width / 5 / pxPerMetre)
        let barPx = metres * pxPerMetre
        let y0 = height - 14
        s += """
            <g id="scale-bar" stroke="#333" stroke-width="1.5">\
            <line x1="12" y1="\(fmt(y0))" x2="\(fmt(12 + barPx))" y2="\(fmt(y0))"/>\
            <line x1="12" y1="\(fmt(y0 - 5))" x2="12" y2="\(fmt(y0 + 1))"/>\
            <line x1="\(fmt(12 + barPx / 2))" y1="\(fmt(y0 - 3))" x2="\(fmt(12 + barPx / 2))" y2="\(fmt(y0 + 1))"/>\
            <line x1="\(fmt(12 + barPx))" y1="\(fmt(y0 - 5))" x2="\(fmt(12 + barPx))" y2="\(fmt(y0 + 1))"/>\
            <text x="\(fmt(18 + barPx))" y="\(fmt(y0 + 4))" stroke="none" fill="#333">\(lengthText(metres))</text></g>

            """
        s += "</svg>\n"
        return s
    }

    static func colour(_ kind: ReplayEvent.Kind) -> String {
        switch kind {
        case .enter: "#2a9d3c"
        case .exit: "#d8452f"
        case .dwell: "#e0a100"
        case .unknown: "#888888"
        }
    }

    /// `05:52:03` (UTC).
    static func clock(_ t: WallInstant) -> String {
        let c = CivilDateTime(localSeconds: t.secondsSinceEpoch)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(c.hour)):\(two(c.minute)):\(two(c.second))"
    }

    /// The largest of 1, 2, 5 × 10ⁿ metres not above `m` (at least 1 m).
    static func niceLength(_ m: Double) -> Double {
        guard m.isFinite, m > 1 else { return 1 }
        let p = pow(10, floor(log10(m)))
        for f in [5.0, 2.0, 1.0] where f * p <= m { return f * p }
        return p
    }

    /// `500 m`, `2 km`.
    static func lengthText(_ m: Double) -> String { m >= 1000 ? "\(fmt(m / 1000)) km" : "\(fmt(m)) m" }

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
