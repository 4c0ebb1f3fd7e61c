// What the annunciator speaks in: its outputs, the changes it asks the caller to make, and the
// alert levels that choose a pattern and whether it repeats (the rules: Annunciator.swift).

/// The three outputs the annunciator drives.
public enum AnnunciatorOutput: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case buzzer
    /// The alert LED: shows each pattern's rhythm.
    case led
    /// The badge LED: lit while unacknowledged alerts exist.
    case badge

    public var description: String {
        switch self {
        case .buzzer: return "buzzer"
        case .led: return "led"
        case .badge: return "badge"
        }
    }
}

/// One output switching at one instant.
public struct OutputChange: Hashable, Sendable, CustomStringConvertible {
    /// Monotonic nanoseconds.
    public var time: UInt64
    public var output: AnnunciatorOutput
    public var isOn: Bool

    public init(time: UInt64, output: AnnunciatorOutput, isOn: Bool) {
        self.time = time
        self.output = output
        self.isOn = isOn
    }

    public var description: String { "\(time) \(output) \(isOn ? "on" : "off")" }
}

/// How insistently an alert is shown (Apple's interruption levels, mapped by the caller: passive or
/// quiet hours → `ledOnly`, active/timeSensitive → `normal`, critical → `loud`).
public enum AlertLevel: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// LED only, no buzzer.
    case ledOnly
    /// The pattern on buzzer and LED, once.
    case normal
    /// The pattern on buzzer and LED, repeated with escalation until acknowledged.
    case loud

    public var description: String {
        switch self {
        case .ledOnly: return "ledOnly"
        case .normal: return "normal"
        case .loud: return "loud"
        }
    }
}
