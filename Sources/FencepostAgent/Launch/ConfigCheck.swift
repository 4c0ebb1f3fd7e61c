// The configuration check that both `fencepost check-config` and `fencepost-agent --check-config`
// run (the second for boards with only the cross-built agent, and for the unit's ExecReload=):
// the file parsed as a start would, every zone checked, and every time zone name looked up.
import CivilTime
import ConfigFile
import FencepostLinux
import LocalNotifications

/// Checks a configuration as the agent's start would.
public enum ConfigCheck {
    /// Parses `text` (the file at `path`), checks the zones' GeoJSON and every time zone name.
    /// - Returns: the configuration, how many `[[request]]` tables the file has (zones are not
    ///   requests: a summary counts the two apart), and the keys it sets that a SIGHUP does not
    ///   apply (``ConfigurationKeys``).
    /// - Throws: the first problem, as FILE:LINE: key.path: message.
    public static func check(text: String, path: String, zones: SystemZones) throws(AgentConfigurationError)
        -> (configuration: AgentConfiguration, requestTables: Int, restartKeys: [String]) {
        let config = try AgentConfiguration.parse(text, path: path, zoneFileReader: InputFiles.readZones)
        let document = try? ConfigSection.parse(text)
        // No [[request]] table at all is zero tables.
        let tables = ((try? document?.sections("request")) ?? nil) ?? []
        if let problem = unknownZone(config, document: document, tables: tables, zones: zones) { throw problem }
        return (config, tables.count, document.map { ConfigurationKeys.restartKeysSet(in: $0) } ?? [])
    }

    /// The line that says what a SIGHUP does with the file's keys.
    public static func reloadLine(restartKeys: [String]) -> String {
        restartKeys.isEmpty ? "reload: SIGHUP applies every key set here"
            : "reload: SIGHUP applies every key set here except \(restartKeys.joined(separator: ", ")), which need\(restartKeys.count == 1 ? "s" : "") a restart"
    }

    /// Reads the file at `path` and checks it (``check(text:path:zones:)``); a file that cannot be
    /// read or is not UTF-8 is a problem at the file.
    public static func check(path: String, zones: SystemZones) throws(AgentConfigurationError)
        -> (configuration: AgentConfiguration, requestTables: Int, restartKeys: [String]) {
        return try check(text: try AgentLauncher.text(path), path: path, zones: zones)
    }

    /// The first time zone name the system does not know (the device zone, a calendar trigger's
    /// `tz`), as the error the agent (or the engine, for a request) would give, at its line.
    static func unknownZone(_ c: AgentConfiguration, document: ConfigSection?, tables: [ConfigSection],
                            zones: SystemZones) -> AgentConfigurationError? {
        if let name = c.timeZone {
            do throws(ZoneError) { _ = try zones.rules(named: name) } catch {
                return AgentConfigurationError(path: c.path, line: document?.value("time_zone")?.line,
                                               message: "time_zone: \(error)")
            }
        }
        for (k, request) in c.requests.enumerated() {
            guard case .calendar(let t) = request.trigger, let name = t.zoneIdentifier else { continue }
            do throws(ZoneError) { _ = try zones.rules(named: name) } catch {
                let table = k < tables.count ? tables[k] : nil
                return AgentConfigurationError(path: c.path, line: table?.table.value(at: ["trigger", "calendar", "tz"])?.line ?? table?.line,
                                               message: "request[\(k)] (id \"\(request.identifier)\"): trigger.calendar.tz: \(error)")
            }
        }
        return nil
    }
}
