// The board's outputs and button: deliveries become annunciator alerts, whose pin changes drive
// the GPIO lines; button edges become presses through the debouncer.
import Annunciator
import CivilTime
import FencepostLinux
import LocalNotifications

/// Buzzer, alert LED, badge LED and the button, behind any GPIO backend.
final class AlertOutputs {
    private(set) var annunciator: Annunciator
    private(set) var library: BuzzerPatternLibrary
    private var lines: [AnnunciatorOutput: any GPIOOutputLine] = [:]
    let button: (any GPIOInputLine)?
    private var debouncer: ButtonDebouncer
    let backendDescription: String
    /// Pin changes made, for the latency figures: (time of the change, output, on).
    var onChange: ((UInt64, AnnunciatorOutput, Bool) -> Void)?

    init(backend: any GPIOBackend, configuration: GPIOConfiguration, patterns: [BuzzerPattern], now: UInt64) throws(GPIOError) {
        backendDescription = backend.backendDescription
        annunciator = Annunciator()
        library = BuzzerPatternLibrary(custom: patterns)
        debouncer = ButtonDebouncer(configuration: Self.timings(configuration), at: now)
        if let spec = configuration.buzzer { lines[.buzzer] = try backend.requestOutput(spec) }
        if let spec = configuration.led { lines[.led] = try backend.requestOutput(spec) }
        if let spec = configuration.badge { lines[.badge] = try backend.requestOutput(spec) }
        button = try configuration.button.map { spec throws(GPIOError) in try backend.requestInput(spec) }
    }

    /// Replaces the pattern library (config reload).
    func setPatterns(_ patterns: [BuzzerPattern]) { library = BuzzerPatternLibrary(custom: patterns) }

    /// The button's debounce and long-press timings of `configuration` (its lines stay as claimed).
    func setButtonTimings(_ configuration: GPIOConfiguration) {
        debouncer.reconfigure(Self.timings(configuration))
    }

    static func timings(_ configuration: GPIOConfiguration) -> ButtonDebouncer.Configuration {
        .init(debounce: UInt64(configuration.debounceMilliseconds) * 1_000_000,
              longPress: UInt64(configuration.longPressMilliseconds) * 1_000_000)
    }

    /// The annunciator level for a delivery's signal.
    static func level(_ s: DeliverySignal) -> AlertLevel {
        if s.untilAcknowledged { return .loud }
        return s.pattern == nil ? .ledOnly : .normal
    }

    /// Starts the alert of delivery `d`; true when a line changed at once (false when it waits
    /// behind the alert that is playing). The LED follows the delivery's signal (`[alerts] led`).
    @discardableResult
    func deliver(_ d: DeliveredNotification, at now: UInt64) throws(GPIOError) -> Bool {
        let level = Self.level(d.signal)
        let pattern = d.signal.pattern == nil && level != .loud ? BuzzerPattern.none : library.pattern(forSound: d.signal.pattern, level: level)
        return try apply(annunciator.start(d.identifier, pattern: pattern, level: level, usesLED: d.signal.led, at: now))
    }

    /// Whether the badge line is driven (`[alerts] badge`); switching it follows the annunciator's
    /// badge at once.
    var badgeEnabled = true {
        didSet {
            guard badgeEnabled != oldValue, let line = lines[.badge] else { return }
            try? line.set(active: badgeEnabled && annunciator.badgeIsOn)
        }
    }

    /// Puts back the badge for a delivery that was unacknowledged before a restart: one short LED
    /// flash for all of them (never in front of a new delivery), then the badge stays lit.
    func remind(_ id: String, usesLED: Bool, at now: UInt64) throws(GPIOError) {
        try apply(annunciator.remind(id, usesLED: usesLED, at: now))
    }

    func acknowledge(_ id: String, at now: UInt64) throws(GPIOError) { try apply(annunciator.acknowledge(id, at: now)) }

    func advance(to now: UInt64) throws(GPIOError) {
        try apply(annunciator.advance(to: max(now, annunciator.now)))
    }

    /// The alert a button press answers: the one playing, else the newest unacknowledged.
    var currentAlert: String? { annunciator.playingID ?? annunciator.newestUnacknowledged }

    /// Reads the button's pending edges; returns the presses they complete.
    func readButton(at now: UInt64) throws(GPIOError) -> [ButtonEvent] {
        guard let button else { return [] }
        var events: [ButtonEvent] = []
        for edge in try button.readEvents() {
            events += debouncer.edge(pressed: edge.isActive, at: max(edge.timestamp, debouncer.now))
        }
        events += debouncer.advance(to: max(now, debouncer.now))
        return events
    }

    /// Presses the debouncer completes by time alone (a long press while held).
    func advanceButton(to now: UInt64) -> [ButtonEvent] { debouncer.advance(to: max(now, debouncer.now)) }

    /// The earliest time the outputs or the button need attention.
    var nextDeadline: UInt64? {
        [annunciator.nextDeadline, debouncer.nextDeadline].compactMap { $0 }.min()
    }

    /// Every output off and every line given back (shutdown).
    func shutDown(at now: UInt64) {
        try? apply(annunciator.allOff(at: max(now, annunciator.now)))
        for line in lines.values { line.release() }
        button?.release()
    }

    /// Sets the lines; true when one was set. A pattern step that began with these changes is
    /// then timed from when its lines switched (Annunciator.outputsSwitched): the time the caller
    /// read may be tens of milliseconds old by then (the first delivery after start-up runs code
    /// that start-up gave back to the page cache), and the step would be cut short by as much.
    @discardableResult
    private func apply(_ changes: [OutputChange]) throws(GPIOError) -> Bool {
        var changed = false
        for c in changes {
            guard let line = lines[c.output], c.output != .badge || badgeEnabled else { continue }
            try line.set(active: c.isOn)
            changed = true
            onChange?(c.time, c.output, c.isOn)
        }
        if !changes.isEmpty { annunciator.outputsSwitched(at: SystemClocks.boottimeNow().nanosecondsSinceBoot) }
        return changed
    }
}
