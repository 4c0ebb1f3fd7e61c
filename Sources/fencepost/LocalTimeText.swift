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
            writeErrorLine("fencepost: local times in UTC: the device zone is not readable (\(error)); --zone names one")
            return ZoneRules.utc
        }
    }
}

enum LocalTimeText {
    /// `Tue 2026-11-24 08:30:00 CET` for an RFC 3339 text; "-" for none; the text itself when it
    /// does not parse.
    static func local(_ text: String?, in zone: ZoneRules) -> String {
        guard let text else { return "-" }
        guard case .success(let t) = RFC3339.parse(text.utf8, lenient: true) else { return text }
        return local(t.instant, in: zone)
    }

    /// `Sat 2026-03-28 02:30:00 CET`, with ` +01:00` after it when `withOffset` (`next`'s report).
    static func local(_ t: WallInstant, in zone: ZoneRules, withOffset: Bool = false) -> String {
        let o = zone.offset(at: t)
        let seconds = Int64(o.utcOffsetSeconds)
        let localSeconds = t.secondsSinceEpoch + seconds
        let c = CivilDateTime(localSeconds: localSeconds)
        let dayNumber = localSeconds >= 0 ? localSeconds / 86400 : (localSeconds - 86399) / 86400
        let weekday = InstantText.weekdayNames[CivilDays.weekday(dayNumber: dayNumber) - 1]
        let text = c.iso8601.replacingFirst("T", with: " ")
        return "\(weekday) \(text) \(o.abbreviation)" + (withOffset ? " \(InstantText.offset(Int(seconds)))" : "")
    }
}
