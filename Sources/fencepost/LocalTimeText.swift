// Local times for `pending` and `delivered`: the instant in the device zone next to UTC, as a
// person reads a clock in the van ("Tue 08:30 CET").
import ArgumentParser
import CivilTime
import FencepostLinux

/// `--zone`: which zone local times are shown in (default: the device zone, TZ else /etc/localtime).
struct LocalZoneOption: ParsableArguments {
    @Option(name: .customLong("zone"),
            help: ArgumentHelp("Show local times in this IANA zone (default: the device zone: TZ, else /etc/localtime).",
                               valueName: "zone"))
    var name: String?

    /// The zone's rules, or UTC when the device has none readable (with the reason on standard error).
    func rules() throws(ClientFailure) -> ZoneRules {
        let zones = SystemZones()
        if let name {
            do throws(ZoneError) { return try zones.rules(named: name) } catch {
                throw ClientFailure(64, "--zone \(name): \(error)")
            }
        }
        do throws(ZoneError) { return try zones.deviceZone(tzVariable: SystemZones.environmentTZ()) } catch {
            return ZoneRules.utc
        }
    }
}

enum LocalTimeText {
    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Tue 2026-11-24 08:30:00 CET` for an RFC 3339 text; "-" for none; the text itself when it
    /// does not parse.
    static func local(_ text: String?, in zone: ZoneRules) -> String {
        guard let text else { return "-" }
        guard case .success(let t) = RFC3339.parse(text.utf8, lenient: true) else { return text }
        return local(t.instant, in: zone)
    }

    static func local(_ instant: WallInstant, in zone: ZoneRules) -> String {
        let offset = zone.offset(at: instant)
        let c = CivilDateTime(localSeconds: instant.secondsSinceEpoch + Int64(offset.utcOffsetSeconds))
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        // 1970-01-01 was a Thursday.
        let days = (instant.secondsSinceEpoch + Int64(offset.utcOffsetSeconds)).floorDivided(by: 86_400)
        let weekday = weekdays[Int(((days + 4) % 7 + 7) % 7)]
        return "\(weekday) \(c.year)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) \(offset.abbreviation)"
    }
}

private extension Int64 {
    func floorDivided(by d: Int64) -> Int64 { self >= 0 ? self / d : -((-self + d - 1) / d) }
}
