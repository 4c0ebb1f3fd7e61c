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

    /// From the TOML layer's error (syntax or type), which has a line and a key path.
    init(path: String?, _ error: ConfigError) {
        var message = error.path.isEmpty ? "" : error.path + ": "
        if let column = error.column { message = "column \(column): " + message }
        self.init(path: path, line: error.line, message: message + error.message)
    }

    /// `FILE:LINE: message`, `FILE: message`, `line LINE: message` or the message alone.
    public var description: String {
        switch (path, line) {
        case let (p?, l?): "\(p):\(l): \(message)"
        case let (p?, nil): "\(p): \(message)"
        case let (nil, l?): "line \(l): \(message)"
        case (nil, nil): message
        }
    }
}
