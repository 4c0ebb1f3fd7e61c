// Local times for `pending` and `delivered`: the instant in the agent's device zone next to UTC,
// as a person reads a clock in the van ("Tue 08:30 CET").
import ArgumentParser
import CivilTime
import FencepostLinux

/// `--zone`: which zone local times are shown in. By default the agent's device zone (its
/// `time_zone`, else its TZ or /etc/localtime), in which its floating calendar triggers fire and
/// its quiet hours hold: the agent reports it in `status` (`clock.zone`).
struct LocalZoneOption: ParsableArguments {
    @Option(name: .customLong("zone"),
            help: ArgumentHelp("Show local times in this IANA zone (default: the agent's device zone, which floating triggers follow).",
                               valueName: "zone"))
    var name: String?

    /// The zone's rules: `--zone`, else the agent's at `socket`; when the agent's zone cannot be
    /// loaded here, this machine's device zone (TZ, else /etc/localtime) with the reason on standard
    /// error, and UTC when that is not readable either.
    func rules(agent socket: String) throws(ClientFailure) -> ZoneRules {
        let zones = SystemZones()
        if let name {
            do throws(ZoneError) { return try zones.rules(named: name) } catch {
                throw ClientFailure(64, "--zone \(name): \(error)")
            }
        }
        let status = try ControlClient.call(socket, "status", .object([("limit", .integer(1))]))
        if let agentZone = status["clock"]?["zone"]?.string {
            // The agent names its zone as it loaded it: an IANA name, a TZif path or a POSIX TZ
            // rule, all of which TZ accepts; "localtime" is /etc/localtime (no zoneinfo name).
            let tz: String? = agentZone == "localtime" ? nil : agentZone
            do throws(ZoneError) { return try zones.deviceZone(tzVariable: tz) } catch {
                writeStandardError("fencepost: the agent's zone \(agentZone) is not readable here (\(error)); local times in this machine's zone\n")
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
