import FencepostLinux
import Foundation
import Testing

/// `fencepost run` as a real child process in a temporary folder, with its standard output (the
/// console GPIO) and standard error (the log) captured to files.
final class DaemonProcess {
    let dir: URL
    let configPath: String
    let socket: String
    let statePath: String
    private(set) var process: Process?
    private var outURL: URL, errURL: URL
    private var runs = 0

    /// The repository's root (for board/demo).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let demoDrive = root.appendingPathComponent("board/demo/duesseldorf-2009-07-07.nmea").path

    init() throws {
        // Short: sun_path holds 107 bytes.
        dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-run-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        configPath = dir.appendingPathComponent("fencepost.toml").path
        socket = dir.appendingPathComponent("control.sock").path
        statePath = dir.appendingPathComponent("state.sqlite").path
        outURL = dir.appendingPathComponent("stdout-0")
        errURL = dir.appendingPathComponent("stderr-0")
    }

    /// Kills a daemon still running, waits at most 10 s for Foundation to see it end (it sees a
    /// child end when the child's end of a socket pair closes: a descriptor leaked into another
    /// long-lived process once kept that open for minutes), and removes the folder.
    deinit {
        if let p = process, p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            _ = p.waitForEnd(timeout: 10)
        }
        try? FileManager.default.removeItem(at: dir)
    }

    /// The configuration's `clock_trust` (``header``).
    var clockTrust = "always"
    /// The configuration's `time_zone` (``header``); nil: none, the device's zone (TZ, /etc/localtime).
    var timeZone: String? = "UTC"

    /// The configuration's head: state in the folder, trusted clock (the socket goes at the end).
    var header: String {
        """
        state = "\(statePath)"
        clock_trust = "\(clockTrust)"
        \(timeZone.map { "time_zone = \"\($0)\"" } ?? "")

        """
    }

    /// Writes the configuration: ``header``, `body`, then the `[socket]` table.
    func writeConfig(_ body: String, socketMode: String = "0o600", socketExtra: String = "") throws {
        let text = header + body + "\n[socket]\npath = \"\(socket)\"\nmode = \(socketMode)\n" + socketExtra
        try Data(text.utf8).write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts `fencepost run --config …` (a second start after a stop is a restart); with `agent`,
    /// the lean `fencepost-agent --config …` instead.
    ///
    /// `wrapper` runs it under another program (`["/usr/bin/strace", …]`): the wrapper gets the
    /// binary's path and arguments after its own. `environment` is added to the test's own.
    func start(_ extra: [String] = [], agent: Bool = false, wrapper: [String] = [], environment: [String: String] = [:]) throws {
        guard let binary = agent ? ChildProcess.agentBinary : ChildProcess.binary else { throw ChildProcess.NotFound() }
        outURL = dir.appendingPathComponent("stdout-\(runs)")
        errURL = dir.appendingPathComponent("stderr-\(runs)")
        runs += 1
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let p = Process()
        let arguments = (agent ? [] : ["run"]) + ["--config", configPath] + extra
        if let w = wrapper.first {
            p.executableURL = URL(fileURLWithPath: w)
            p.arguments = Array(wrapper.dropFirst()) + [binary.path] + arguments
        } else {
            p.executableURL = binary
            p.arguments = arguments
        }
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        p.standardInput = FileHandle.nullDevice
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try p.run()
        process = p
    }

    var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits until `condition` holds (polling every 20 ms); false after `timeout` seconds.
    @discardableResult
    func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// Waits for the log to contain `text`.
    @discardableResult
    func waitForLog(_ text: String, timeout: Double = 20) -> Bool { wait(timeout: timeout) { stderr.contains(text) } }

    func signal(_ s: Int32) { if let p = process { kill(p.processIdentifier, s) } }

    /// Waits for the process to end; its status and how long it took, nil after `timeout`.
    func waitForExit(timeout: Double) -> (status: Int32, seconds: Double)? {
        guard let p = process else { return nil }
        let start = Date()
        guard wait(timeout: timeout, { !p.isRunning }) else { return nil }
        p.waitUntilExit()
        return (p.terminationStatus, Date().timeIntervalSince(start))
    }

    /// Runs a CLI command against this daemon's socket (killed after 120 s: the CLI gives up on
    /// a silent daemon after 30).
    func cli(_ arguments: [String], input: String = "") throws -> ChildProcess.Output {
        try ChildProcess.run(arguments + ["--socket", socket], input: input, timeLimit: 120)
    }

    /// The console lines `+S.sss s  NAME (BCM n) on|off`, parsed.
    var pinChanges: [(time: Double, name: String, on: Bool)] {
        stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 4, parts[0].hasPrefix("+"), let t = Double(parts[0].dropFirst()) else { return nil }
            return (t, String(parts[2]), parts.last == "on")
        }
    }

    /// Whether every output that was switched on was switched off again at the end.
    var allOutputsOffAtEnd: Bool {
        var state: [String: Bool] = [:]
        for c in pinChanges { state[c.name] = c.on }
        return state.values.allSatisfy { !$0 }
    }
}

extension DaemonProcess {
    /// The link the agent reads as its serial GPS in ``startOnPseudoTerminal(baud:before:after:)``.
    var gpsLink: String { dir.appendingPathComponent("gps").path }

    /// Starts the agent on a pseudo-terminal as its serial GPS, reached through ``gpsLink`` (as a
    /// udev rule gives /dev/serial0), with the console GPIO; `before` and `after` are config text
    /// around the `[gps]` table. Waits for "GPS: reading"; the caller writes NMEA to the terminal.
    func startOnPseudoTerminal(baud: Int = 9600, before: String = "", after: String = "") throws -> PseudoTerminal {
        let pty = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: gpsLink, withDestinationPath: pty.devicePath)
        try writeConfig(before + "[gps]\nsource = \"serial\"\ndevice = \"\(gpsLink)\"\nbaud = \(baud)\n\n" + DaemonTests.gpio + after)
        try start()
        #expect(waitForLog("GPS: reading"), "log:\n\(stderr)")
        return pty
    }
}
