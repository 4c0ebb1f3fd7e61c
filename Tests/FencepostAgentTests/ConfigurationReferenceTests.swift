import FencepostAgent
import Foundation
import Testing

/// docs/configuration.md lists every key of the config file once, with its reload behaviour: every
/// key in its table is read by the parser (a value of the wrong type is refused naming that key,
/// never as an unknown key), every key the parser accepts is in the table (the parser's allowed
/// keys are ConfigurationKeys, and every section refuses a key not among them), and the table's
/// reload column says what ConfigurationKeys says a SIGHUP does.
@Suite struct ConfigurationReferenceTests {
    static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")

    /// The table's rows: key (between the first backticks) and the Reload column.
    static func rows() throws -> [(key: String, reload: String)] {
        let text = try String(contentsOf: reference, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> (String, String)? in
            guard line.hasPrefix("| `") else { return nil }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 7 else { return nil }
            let key = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            return (key, cells[5])
        }
    }

    static func parse(_ text: String) -> AgentConfigurationError? {
        do {
            _ = try AgentConfiguration.parse(text, path: nil, zoneFileReader: { (_: String) throws(InputFiles.Failure) -> [UInt8] in [] })
            return nil
        } catch {
            return error
        }
    }

    /// `path` set to `value` in TOML: `a.b.c = v` as `[a.b]\nc = v`.
    static func toml(_ path: String, _ value: String) -> String {
        let parts = path.replacingOccurrences(of: "<name>", with: "beep").split(separator: ".").map(String.init)
        if parts.count == 1 { return "\(parts[0]) = \(value)\n" }
        // [hook] needs its command before any other key is looked at.
        let needed = path == "hook.timeout" ? "command = [\"/bin/true\"]\n" : ""
        return "[\(parts.dropLast().joined(separator: "."))]\n" + needed + "\(parts.last!) = \(value)\n"
    }

    @Test func theTableListsExactlyTheParsersKeys() throws {
        let rows = try Self.rows()
        let documented = rows.map(\.key)
        let parser = ConfigurationKeys.all.map(\.path)
        #expect(Set(documented).count == documented.count, "a key twice in the table")
        #expect(Set(documented).subtracting(parser).sorted() == [], "in the table, not in the parser")
        #expect(Set(parser).subtracting(documented).sorted() == [], "in the parser, not in the table")
        for key in ConfigurationKeys.all {
            let row = try #require(rows.first { $0.key == key.path })
            let documentedRestart = row.reload == "restart"
            #expect(documentedRestart == (key.reload == .needsRestart) && (documentedRestart || row.reload.hasPrefix("SIGHUP")),
                    "\(key.path): the table says \"\(row.reload)\"")
        }
    }

    @Test(arguments: ConfigurationKeys.all.map(\.path))
    func theParserReadsTheKey(_ path: String) throws {
        let error = try #require(Self.parse(Self.toml(path, "{ wrong = 1 }")), "\(path) = { wrong = 1 } was accepted")
        let named = path.replacingOccurrences(of: "<name>", with: "beep")
        #expect(error.description.contains(named) && !error.description.contains("unknown key"), "\(path): \(error)")
    }

    /// Every table of the file refuses a key it does not know: the parser accepts nothing beyond
    /// ConfigurationKeys.
    @Test(arguments: ["", "socket", "engine", "alerts", "gps", "gpio", "gpio.buzzer", "gpio.led", "gpio.badge", "gpio.button", "log", "hook", "fleet"])
    func everySectionRefusesOtherKeys(_ section: String) throws {
        let text = section.isEmpty ? "colour = 1\n" : "[\(section)]\ncolour = 1\n"
        let error = try #require(Self.parse(text), "[\(section)] colour was accepted")
        #expect(error.description.contains("unknown key `colour`"), "\(error)")
    }
}
