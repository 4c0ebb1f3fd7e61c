import Annunciator
import FencepostLinux
import Foundation
import Testing

/// A settable clock for the backends.
final class ManualClock: @unchecked Sendable {
    var now: UInt64
    init(_ now: UInt64) { self.now = now }
}

@Suite("Console and trace GPIO backends")
struct ConsoleGPIOTests {
    @Test("console lines: request drives off, each change one line, release drives off")
    func consoleFormat() throws {
        let clock = ManualClock(5_000_000_000)
        var lines: [String] = []
        let gpio = ConsoleGPIOBackend(clock: { clock.now }) { lines.append($0) }
        let buzzer = try gpio.requestOutput(GPIOLineSpec(name: "buzzer", offset: 18))
        let led = try gpio.requestOutput(GPIOLineSpec(name: "led", offset: 23, activeLow: true))
        clock.now += 12_345_678_901
        try buzzer.set(active: true)
        try buzzer.set(active: true)         // no change, no line
        clock.now += 7_000_000
        try led.set(active: true)
        clock.now += 100_000_000_000
        try buzzer.set(active: false)
        led.release()
        led.release()
        #expect(throws: GPIOError.released(line: GPIOLineSpec(name: "led", offset: 23, activeLow: true))) {
            try led.set(active: true)
        }
        #expect(lines == [
            "+0.000 s  buzzer (BCM 18) off\n",
            "+0.000 s  led (BCM 23) off\n",
            "+12.345 s  buzzer (BCM 18) on\n",
            "+12.352 s  led (BCM 23) on\n",
            "+112.352 s  buzzer (BCM 18) off\n",
            "+112.352 s  led (BCM 23) off\n",
        ])
    }

    @Test("console to a file descriptor: a real pipe receives the lines")
    func consoleToPipe() throws {
        let pipe = Pipe()
        let clock = ManualClock(0)
        let gpio = ConsoleGPIOBackend(clock: { clock.now }, fileDescriptor: FileDescriptor(rawValue: pipe.fileHandleForWriting.fileDescriptor))
        let badge = try gpio.requestOutput(GPIOLineSpec(name: "badge", offset: 24))
        clock.now = 1_500_000_000
        try badge.set(active: true)
        try pipe.fileHandleForWriting.close()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text == "+0.000 s  badge (BCM 24) off\n+1.500 s  badge (BCM 24) on\n")
    }

    @Test("console inputs never fire on their own; fed edges come out once")
    func consoleInput() throws {
        let gpio = ConsoleGPIOBackend(clock: { 0 }) { _ in }
        let button = try gpio.requestInput(GPIOLineSpec(name: "button", offset: 17, activeLow: true, bias: .pullUp))
        #expect(button.fileDescriptor == nil)
        #expect(try button.readEvents().isEmpty)
        #expect(gpio.feed([GPIOEdge(isActive: true, timestamp: 5), GPIOEdge(isActive: false, timestamp: 9)], to: "button"))
        #expect(!gpio.feed([], to: "nope"))
        #expect(try button.readEvents() == [GPIOEdge(isActive: true, timestamp: 5), GPIOEdge(isActive: false, timestamp: 9)])
        #expect(try button.readEvents().isEmpty)
    }

    /// The annunciator's changes carried out on trace outputs: the trace equals the changes, and an
    /// output released while on is driven off.
    @Test("annunciator driving trace outputs")
    func annunciatorOnTrace() throws {
        let clock = ManualClock(0)
        let gpio = TraceGPIOBackend(clock: { clock.now })
        var lines: [AnnunciatorOutput: any GPIOOutputLine] = [:]
        for (i, output) in AnnunciatorOutput.allCases.enumerated() {
            lines[output] = try gpio.requestOutput(GPIOLineSpec(name: output.description, offset: UInt32(20 + i)))
        }
        var a = Annunciator()
        var expected: [GPIOPinChange] = AnnunciatorOutput.allCases.enumerated().map {
            GPIOPinChange(time: 0, line: GPIOLineSpec(name: $0.1.description, offset: UInt32(20 + $0.0)), isActive: false)
        }
        func apply(_ changes: [OutputChange]) throws {
            for c in changes {
                clock.now = c.time
                try lines[c.output]!.set(active: c.isOn)
                expected.append(GPIOPinChange(time: c.time, line: lines[c.output]!.spec, isActive: c.isOn))
            }
        }
        try apply(a.start("n", pattern: .double, level: .normal, at: 1_000))
        while let d = a.nextDeadline { try apply(a.advance(to: d)) }
        try apply(a.start("c", pattern: .alarm, level: .loud, at: 10_000_000_000))
        try apply(a.advance(to: 10_050_000_000))
        #expect(gpio.changes == expected)
        // Shutdown mid-pattern: release drives the lit outputs off.
        clock.now = 10_060_000_000
        for output in AnnunciatorOutput.allCases { lines[output]!.release() }
        let tail = gpio.changes.suffix(3).map { "\($0.line.name) \($0.isActive)" }
        #expect(tail == ["buzzer false", "led false", "badge false"])
    }
}

@Suite("Button through a GPIO input")
struct ButtonInputTests {
    /// Edges fed into a simulated input come out of `readEvents` and, through the debouncer, give one
    /// short and one long press (active-low button: active = pressed).
    @Test("simulated input → debouncer → presses")
    func buttonPipeline() throws {
        let gpio = TraceGPIOBackend(clock: { 0 })
        let button = try gpio.requestInput(GPIOLineSpec(name: "button", offset: 17, activeLow: true, bias: .pullUp))
        let ms: UInt64 = 1_000_000
        gpio.feed([
            GPIOEdge(isActive: true, timestamp: 100 * ms), GPIOEdge(isActive: false, timestamp: 102 * ms),
            GPIOEdge(isActive: true, timestamp: 104 * ms), GPIOEdge(isActive: false, timestamp: 300 * ms),
            GPIOEdge(isActive: true, timestamp: 1000 * ms),
        ], to: "button")
        var debouncer = ButtonDebouncer()
        var presses: [ButtonEvent] = []
        for edge in try button.readEvents() { presses += debouncer.edge(pressed: edge.isActive, at: edge.timestamp) }
        presses += debouncer.advance(to: 2500 * ms)
        gpio.feed([GPIOEdge(isActive: false, timestamp: 2600 * ms)], to: "button")
        for edge in try button.readEvents() { presses += debouncer.edge(pressed: edge.isActive, at: edge.timestamp) }
        presses += debouncer.advance(to: 3000 * ms)
        #expect(presses == [ButtonEvent(.shortPress, at: 330 * ms), ButtonEvent(.longPress, at: 2000 * ms)])
        button.release()
        #expect(throws: GPIOError.self) { try button.readEvents() }
    }
}
