import FencepostAgent
import Testing

/// `[log] level`: the default, each level, and mistakes at their line.
@Suite struct LogConfigurationTests {
    static func parse(_ text: String) throws -> AgentConfiguration {
        try AgentConfiguration.parse(text, path: "/etc/fencepost/fencepost.toml") { _ in [] }
    }

    @Test func defaultIsInfo() throws {
        #expect(try Self.parse("").logLevel == .info)
        #expect(try Self.parse("[log]\n").logLevel == .info)
    }

    @Test(arguments: [("error", LogLevel.error), ("warning", .warning), ("info", .info), ("debug", .debug)])
    func eachLevel(name: String, level: LogLevel) throws {
        #expect(try Self.parse("[log]\nlevel = \"\(name)\"\n").logLevel == level)
    }

    @Test func mistakesNameTheirLine() {
        func message(_ text: String) -> String? {
            do { _ = try Self.parse(text); return nil } catch { return "\(error)" }
        }
        #expect(message("time_zone = \"UTC\"\n\n[log]\nlevel = \"loud\"\n")
                == "/etc/fencepost/fencepost.toml:4: log.level: \"loud\" is not one of \"error\", \"warning\", \"info\", \"debug\"")
        #expect(message("[log]\nlevl = \"info\"\n")?.hasPrefix("/etc/fencepost/fencepost.toml:2: log: unknown key `levl`") == true)
        #expect(message("[log]\nlevel = 3\n")?.hasPrefix("/etc/fencepost/fencepost.toml:2: log.level: ") == true)
    }
}
