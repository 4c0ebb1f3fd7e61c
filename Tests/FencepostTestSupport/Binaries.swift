import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The built `fencepost` and `fencepost-agent`, and a run of either to its end as a real child
/// process (a program that keeps running beside a test is a ``SpawnedProcess``).
///
/// The binaries are looked up next to the running test bundle (SwiftPM puts both in the products
/// directory, whatever `--scratch-path` is), or at `$FENCEPOST_BINARY` and beside it.
public enum Binaries {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var stdoutLines: [String] {
            var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }
    }

    public static let binary: URL? = {
        let fm = FileManager.default
        if let path = ProcessInfo.processInfo.environment["FENCEPOST_BINARY"], fm.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        if let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
        }
        if let exe = Bundle.main.executableURL { candidates.append(exe.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        for dir in candidates {
            // Inside an .xctest bundle on macOS the products directory is further up.
            var d = dir
            for _ in 0..<4 {
                let f = d.appendingPathComponent("fencepost")
                if fm.isExecutableFile(atPath: f.path) { return f }
                d.deleteLastPathComponent()
            }
        }
        return nil
    }()

    /// The path of `fencepost`, if built.
    public static var fencepost: String? { binary?.path }

    /// The path of `fencepost-agent`, if built.
    public static var agent: String? { agentBinary?.path }

    /// The lean agent executable, `fencepost-agent`, next to `fencepost`.
    public static var agentBinary: URL? {
        guard let b = binary else { return nil }
        let f = b.deletingLastPathComponent().appendingPathComponent("fencepost-agent")
        return FileManager.default.isExecutableFile(atPath: f.path) ? f : nil
    }

    /// Runs `fencepost arguments…` with `input` on standard input (through a file, so that neither
    /// side blocks on a full pipe) and collects both outputs.
    ///
    /// A child still running after `timeLimit` seconds is killed (SIGKILL): its status is then
    /// ``timedOut`` and its standard error ends with a line that says so and names the command, so
    /// that a hang is a failure with a name instead of a test run that never ends.
    public static func run(_ arguments: [String], input: String = "", environment: [String: String] = ["TZ": "UTC"],
                    executable: URL? = nil, timeLimit: Double = 600) throws -> Output {
        guard let binary = executable ?? binary else { throw NotFound() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let inURL = dir.appendingPathComponent("in"), outURL = dir.appendingPathComponent("out")
        let errURL = dir.appendingPathComponent("err")
        try Data(input.utf8).write(to: inURL)
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let stdin = try FileHandle(forReadingFrom: inURL)
        let stdout = try FileHandle(forWritingTo: outURL), stderr = try FileHandle(forWritingTo: errURL)
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let deadline = Date().addingTimeInterval(timeLimit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let killed = process.isRunning
        if killed {
            kill(process.processIdentifier, SIGKILL)
            _ = process.waitForEnd(timeout: 10)
        } else {
            process.waitUntilExit()
        }
        try stdin.close(); try stdout.close(); try stderr.close()
        var errors = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        if killed {
            errors += "\n[test harness: \(binary.lastPathComponent) \(arguments.joined(separator: " ")) was still running after \(Int(timeLimit)) s; killed]\n"
        }
        return Output(
            status: killed ? timedOut : process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: errors)
    }

    /// The status ``run(_:input:environment:executable:timeLimit:)`` gives a child it killed.
    public static let timedOut: Int32 = -9

    public struct NotFound: Error, CustomStringConvertible {
        public init() {}
        public var description: String { "fencepost binary not found next to the test bundle; set FENCEPOST_BINARY" }
    }
}

public extension Process {
    /// Waits until Foundation sees the process end, polling every 10 ms; false after `timeout`
    /// seconds (unlike `waitUntilExit`, which has no deadline).
    func waitForEnd(timeout: Double) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while isRunning && Date() < end { usleep(10_000) }
        return !isRunning
    }
}
