// The region monitor over a whole log, as the daemon would run it: zones become Geofencing
// regions, each fix with a date goes to `RegionMonitor.process` at the fix's own time, and before
// it the monitor's deadlines (dwell due, fix timeout) that fall in the gap are served with
// `advance(to:)`, exactly as the daemon's timer would wake for them.
import CivilTime
import FencepostJSON
import Geofencing
import Position
import TrackFormats

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum ReplayMonitor {
    /// The Geofencing region for a zone read from GeoJSON.
    static func region(_ z: ZoneDefinition) throws(ReplayFailure) -> Region {
        let shape: RegionShape
        do throws(RegionError) {
            switch z.shape {
            case .circle(let c, let r): shape = .circle(try CircularRegion(center: c, radius: r))
            case .polygon(let parts): shape = .polygon(try PolygonRegion(parts: parts))
            }
        } catch {
            throw ReplayFailure(65, "zone \(JSONText.quoted(z.id)): \(error)")
        }
        return Region(
            identifier: z.id, shape: shape, notifyOnEntry: z.notifyOnEntry, notifyOnExit: z.notifyOnExit,
            dwell: z.dwell, cooldown: z.cooldown ?? 0)
    }

    /// All events of `fixes` against `zones`, in time order. Fixes without a date, and fixes whose
    /// time goes backwards, are not monitored (the monitor needs one clock that only advances).
    ///
    /// - Complexity: O(fixes × (log zones + zones near the fix + active zones)).
    static func events(zones: [ZoneDefinition], fixes: [Fix]) throws(ReplayFailure) -> [ReplayEvent] {
        var monitor = RegionMonitor()
        var regions: [Region] = []
        regions.reserveCapacity(zones.count)
        for z in zones { regions.append(try region(z)) }
        monitor.add(contentsOf: regions)
        return events(monitor: &monitor, fixes: fixes)
    }

    /// All events of `fixes` for the regions and zone set `monitor` holds, as ``events(zones:fixes:)``
    /// reports them (the same loop for a monitor that maps a zone set, as the agent's does).
    static func events(monitor: inout RegionMonitor, fixes: [Fix]) -> [ReplayEvent] {
        var out: [ReplayEvent] = []
        var batch: [RegionEvent] = []
        var last: (time: Double, coordinate: Coordinate)? = nil
        var lastTime = -Double.infinity
        for fix in fixes {
            guard let t = fix.secondsSinceEpoch, t >= lastTime else { continue }
            lastTime = t
            // Deadlines in the gap before this fix: the daemon's timer would have woken for them.
            while let d = monitor.nextDeadline, d < t {
                batch.removeAll(keepingCapacity: true)
                monitor.advance(to: d, into: &batch)
                for e in batch { out.append(event(e, at: last?.coordinate)) }
                if monitor.nextDeadline == d { break }  // no progress: leave it to the fix
            }
            batch.removeAll(keepingCapacity: true)
            monitor.process(fix, at: t, into: &batch)
            let here = fix.usablePosition
            for e in batch {
                var c = here ?? last?.coordinate
                if let here, let last, t > last.time, e.time < t {
                    c = interpolate(last.coordinate, here, (e.time - last.time) / (t - last.time))
                }
                out.append(event(e, at: c))
            }
            if let here { last = (t, here) }
        }
        // The monitor reports each batch in time order; a crossing interpolated back into a gap
        // can still precede a deadline served before its fix. Order by time, ties as reported.
        return out.enumerated().sorted {
            ($0.element.time, $0.element.nanoseconds, $0.offset) < ($1.element.time, $1.element.nanoseconds, $1.offset)
        }.map(\.element)
    }

    static func event(_ e: RegionEvent, at c: Coordinate?) -> ReplayEvent {
        let whole = e.time.rounded(.down)
        var nanos = Int32(((e.time - whole) * 1e9).rounded())
        var seconds = Int64(whole)
        if nanos >= 1_000_000_000 { nanos -= 1_000_000_000; seconds += 1 }
        let kind: ReplayEvent.Kind = switch e.kind {
        case .enter: .enter
        case .exit: .exit
        case .dwell: .dwell
        case .unknown: .unknown
        }
        return ReplayEvent(
            time: WallInstant(secondsSinceEpoch: seconds), nanoseconds: nanos, region: e.identifier, kind: kind,
            coordinate: c)
    }

    /// Straight-line interpolation in degrees: good enough between two fixes seconds apart.
    static func interpolate(_ a: Coordinate, _ b: Coordinate, _ f: Double) -> Coordinate {
        let f = min(1, max(0, f))
        return Coordinate(
            latitude: a.latitude + (b.latitude - a.latitude) * f,
            longitude: a.longitude + (b.longitude - a.longitude) * f)
    }
}

enum JSONText {
    static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        JSONValue.serializeString(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
