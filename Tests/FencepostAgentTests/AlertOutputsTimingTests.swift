@testable import FencepostAgent
import Annunciator
import FencepostLinux
@testable import LocalNotifications
import Foundation
import Testing

/// Output lines whose first switch takes `firstSwitch` of real time before the pin changes (the
/// first delivery after start-up runs code the start-up released from the page table, or a slow
/// driver); each change is recorded with CLOCK_BOOTTIME when the pin changed.
final class SlowFirstSwitchBackend: GPIOBackend {
    final class Output: GPIOOutputLine {
        let spec: GPIOLineSpec
        let backend: SlowFirstSwitchBackend
        private(set) var isActive = false
        init(_ spec: GPIOLineSpec, _ backend: SlowFirstSwitchBackend) { self.spec = spec; self.backend = backend }
        func set(active: Bool) throws(GPIOError) {
            if !backend.switched {
                backend.switched = true
                usleep(UInt32(backend.firstSwitch / 1000))
            }
            if active != isActive {
                backend.changes.append((SystemClocks.boottimeNow().nanosecondsSinceBoot, spec.name, active))
            }
            isActive = active
        }
        func release() { isActive = false }
    }
    final class Input: GPIOInputLine {
        let spec: GPIOLineSpec
        init(_ spec: GPIOLineSpec) { self.spec = spec }
        var fileDescriptor: FileDescriptor? { nil }
        func readEvents() throws(GPIOError) -> [GPIOEdge] { [] }
        func release() {}
    }

    let firstSwitch: UInt64
    var switched = false
    var changes: [(time: UInt64, name: String, on: Bool)] = []
    init(firstSwitch: UInt64) { self.firstSwitch = firstSwitch }
    var backendDescription: String { "slow first switch" }
    func requestOutput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOOutputLine { Output(spec, self) }
    func requestInput(_ spec: GPIOLineSpec) throws(GPIOError) -> any GPIOInputLine { Input(spec) }

    /// The buzzer's on-times, milliseconds, in order.
    var buzzerOnTimes: [Double] {
        var out: [Double] = []
        var since: UInt64?
        for c in changes where c.name == "buzzer" {
            if c.on { since = c.time } else if let s = since { out.append(Double(c.time - s) / 1e6); since = nil }
        }
        return out
    }
}

/// A pattern's steps are timed from when they reach the pins.
@Suite struct AlertOutputsTimingTests {
    static func delivery(_ id: String, sound: String) -> DeliveredNotification {
        DeliveredNotification(identifier: id, requestIdentifier: id, content: NotificationContent(title: "Vehicle check", sound: sound),
                              scheduled: nil, date: nil, outcome: .onTime, regionEvent: nil,
                              signal: DeliverySignal(pattern: sound, untilAcknowledged: false, led: true, quietReason: nil),
                              response: nil, respondedAt: nil)
    }

    /// Runs the outputs' timers in real time until nothing is due (at most `limit` seconds).
    static func play(_ outputs: AlertOutputs, limit: Double = 5) throws {
        let end = Date().addingTimeInterval(limit)
        while let due = outputs.annunciator.nextDeadline, Date() < end {
            let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
            if due > now { usleep(UInt32((due - now) / 1000)) }
            try outputs.advance(to: SystemClocks.boottimeNow().nanosecondsSinceBoot)
        }
    }

    /// The first delivery after start: the clock was read for it, then its pins switched 120 ms
    /// later (the delivery path's first run). The first beep must still last its 150 ms: the
    /// pattern is timed from when the pins switched, not from the earlier reading (which cut the
    /// first beep of the board's first delivery to 50–60 ms under emulation).
    @Test func firstStepKeepsItsLengthWhenThePinsSwitchLate() throws {
        let backend = SlowFirstSwitchBackend(firstSwitch: 120_000_000)
        var gpio = GPIOConfiguration()
        gpio.button = nil
        let triple = try BuzzerPattern(name: "triple", steps: [150, 100, 150, 100, 150])
        let outputs = try AlertOutputs(backend: backend, configuration: gpio, patterns: [triple],
                                       now: SystemClocks.boottimeNow().nanosecondsSinceBoot)
        try outputs.deliver(Self.delivery("check/1/1", sound: "triple"), at: SystemClocks.boottimeNow().nanosecondsSinceBoot)
        try Self.play(outputs)
        let on = backend.buzzerOnTimes
        #expect(on.count == 3, "buzzer on-times \(on) ms; changes \(backend.changes)")
        // Timed from its switch, it cannot end early; a late wake may only lengthen it. (Later
        // steps keep their schedule: a late wake shortens the step after it, by design.)
        #expect((on.first ?? 0) >= 149.9, "buzzer on-times \(on) ms, the first should be ≥ 150")
    }
}
