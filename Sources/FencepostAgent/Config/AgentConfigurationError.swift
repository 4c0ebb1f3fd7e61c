// A config file problem, in the form compilers use so editors can jump to it:
//
//   /etc/fencepost/fencepost.toml:12: gpio.buzzer.pin: 99 is not a BCM pin (0…27)
import ConfigFile

/// A problem in the config file: the file, the line, and a sentence that names the key path.
public struct AgentConfigurationError: Error, CustomStringConvertible {
    /// The config file (nil when the text came without one).
    public var path: String?
    /// 1-based line, nil when the problem has no place in the file (the file as a whole).
    public var line: Int?
    /// "gpio.buzzer.pin: 99 is not a BCM pin (0…27)".
    public var message: String

    public init(path: String?, line: Int?, message: String) {
        self.path = path; self.line = line; self.message = message
    }

    /// From the TOML layer's error (syntax or type), which has a line and a key path. A message
    /// of several lines (every bad feature of a zones file) names the key path on each.
    init(path: String?, _ error: ConfigError) {
        var prefix = error.path.isEmpty ? "" : error.path + ": "
        if let column = error.column { prefix = "column \(column): " + prefix }
        let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false)
        self.init(path: path, line: error.line, message: lines.map { prefix + $0 }.joined(separator: "\n"))
    }

    /// `FILE:LINE: message`, `FILE: message`, `line LINE: message` or the message alone; each
    /// line of a message of several lines so placed.
    public var description: String { lines.joined(separator: "\n") }

    /// The description's lines, each placed in the file.
    public var lines: [String] {
        let place: String
        switch (path, line) {
        case let (p?, l?): place = "\(p):\(l): "
        case let (p?, nil): place = "\(p): "
        case let (nil, l?): place = "line \(l): "
        case (nil, nil): place = ""
        }
        return message.split(separator: "\n", omittingEmptySubsequences: false).map { place + $0 }
    }
}
