/// A named rhythm for the buzzer: alternating on and off durations in milliseconds, starting with on.
///
/// `[200, 100, 200]` is on 200 ms, off 100 ms, on 200 ms. A trailing off duration is silence that
/// still belongs to the pattern (the next pattern waits for it). A pattern with no steps (`none`)
/// makes no sound; the alert LED still flashes once (see ``Annunciator/Configuration``).
public struct BuzzerPattern: Hashable, Sendable, CustomStringConvertible {
    /// The name a notification's `sound` selects it by.
    public let name: String
    /// On/off durations in milliseconds, each 1 … ``maximumStepMilliseconds``.
    public let steps: [UInt32]

    /// Longest single step: 60 s.
    public static let maximumStepMilliseconds: UInt32 = 60_000
    /// Most steps in one pattern.
    public static let maximumStepCount = 64

    /// A validated pattern.
    ///
    /// - Throws: ``BuzzerPatternError`` for an empty name, a zero or over-long step, or too many steps.
    public init(name: String, steps: [UInt32]) throws(BuzzerPatternError) {
        guard !name.isEmpty else { throw .emptyName }
        guard steps.count <= Self.maximumStepCount else {
            throw .tooManySteps(name: name, count: steps.count)
        }
        for (index, step) in steps.enumerated() where step == 0 || step > Self.maximumStepMilliseconds {
            throw .stepOutOfRange(name: name, index: index, milliseconds: step)
        }
        self.name = name
        self.steps = steps
    }

    /// For the built-ins, whose values are known to be valid.
    private init(builtIn name: String, _ steps: [UInt32]) {
        self.name = name
        self.steps = steps
    }

    /// Whether the pattern makes no sound.
    public var isSilent: Bool { steps.isEmpty }

    /// Sum of all steps, milliseconds.
    public var durationMilliseconds: UInt64 { steps.reduce(0) { $0 + UInt64($1) } }

    public var description: String { "\(name) \(steps)" }

    /// One beep.
    public static let `default` = BuzzerPattern(builtIn: "default", [400])
    /// Two short rising beeps and a longer one: a gentle reminder.
    public static let chime = BuzzerPattern(builtIn: "chime", [120, 80, 120, 80, 300])
    /// Two beeps.
    public static let double = BuzzerPattern(builtIn: "double", [200, 150, 200])
    /// Critical: five fast beeps and a long one. Repeated by the annunciator until acknowledged.
    public static let alarm = BuzzerPattern(builtIn: "alarm", [100, 80, 100, 80, 100, 80, 100, 80, 100, 200, 800])
    /// Silence (the LED still shows the alert).
    public static let none = BuzzerPattern(builtIn: "none", [])

    /// The built-in patterns.
    public static let builtIns: [BuzzerPattern] = [.default, .chime, .double, .alarm, .none]
}

/// Why a pattern was refused.
public enum BuzzerPatternError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyName
    case tooManySteps(name: String, count: Int)
    case stepOutOfRange(name: String, index: Int, milliseconds: UInt32)

    public var description: String {
        switch self {
        case .emptyName:
            return "a buzzer pattern needs a name"
        case .tooManySteps(let name, let count):
            return "buzzer pattern \"\(name)\" has \(count) steps; at most \(BuzzerPattern.maximumStepCount) are allowed"
        case .stepOutOfRange(let name, let index, let ms):
            return "buzzer pattern \"\(name)\" step \(index + 1) is \(ms) ms; each step must be 1…\(BuzzerPattern.maximumStepMilliseconds) ms"
        }
    }
}

/// The patterns a device knows: the built-ins plus those from its configuration (which may replace a
/// built-in by using its name).
public struct BuzzerPatternLibrary: Sendable {
    private var byName: [String: BuzzerPattern]

    /// The built-ins, then `custom` (later entries replace earlier ones of the same name).
    public init(custom: [BuzzerPattern] = []) {
        byName = [:]
        for p in BuzzerPattern.builtIns + custom { byName[p.name] = p }
    }

    /// The pattern called `name`, if any.
    public subscript(name: String) -> BuzzerPattern? { byName[name] }

    /// All names, sorted.
    public var names: [String] { byName.keys.sorted() }

    /// The pattern a notification plays: for `.loud` always `alarm` (a critical alert must be
    /// unmistakable, whatever its sound says); otherwise the one its sound names, or `default` when the
    /// sound is nil or unknown (an unknown name is not an error at delivery: the alert still sounds).
    ///
    /// - Complexity: O(1) expected.
    public func pattern(forSound sound: String?, level: AlertLevel) -> BuzzerPattern {
        if level == .loud { return byName["alarm"] ?? .alarm }
        if let sound, let p = byName[sound] { return p }
        return byName["default"] ?? .default
    }
}
