import FencepostTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `fault_proxy.py` (next to this file) as a child process: a TCP proxy on 127.0.0.1 between a
/// board and its broker whose faults the test sets through a control socket (see the script's
/// docstring for the commands). Stopped with SIGTERM at deinit.
final class FaultProxy {
    /// The counters the proxy keeps (bytes forwarded each way, bytes dropped by a blackhole,
    /// connections accepted, open and reset).
    struct Stats: Decodable {
        var mode: String
        var open: Int
        var up: Int
        var down: Int
        var droppedUp: Int
        var droppedDown: Int
        var accepted: Int
        var resets: Int
        /// Bytes flipped by `flip` so far.
        var flipped: Int?
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("fault_proxy.py").path

    /// python3 on PATH (the script needs only its standard library).
    static let python: String? = {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let p = "\(dir)/python3"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }()

    let folder: URL
    let port: UInt16
    private let process: SpawnedProcess
    private var control: Int32 = -1

    /// A proxy to `target` (`127.0.0.1:PORT` or `unix:PATH`) on a port the kernel picks.
    init(target: String) throws {
        guard let python = Self.python else { throw SpawnError(message: "python3 is not on PATH") }
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("fp-px-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let controlPath = folder.appendingPathComponent("control").path
        let p = try SpawnedProcess([python, Self.script, "--target", target, "--control", controlPath],
                                   output: folder.appendingPathComponent("output").path)
        process = p
        var port: UInt16?
        SpawnedProcess.wait(timeout: 10) {
            if let line = p.output.split(separator: "\n").first,
               let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
               let n = object["listening"] as? Int {
                port = UInt16(n)
            }
            return port != nil || !p.isRunning
        }
        guard let port, SpawnedProcess.wait(timeout: 5, { TestSockets.accepts(unix: controlPath) }) else {
            p.stop(timeout: 2)
            throw SpawnError(message: "fault_proxy.py did not start: \(p.output)")
        }
        self.port = port
        control = TestSockets.connectUnix(controlPath)
    }

    deinit {
        if control >= 0 { close(control) }
        process.stop(timeout: 5)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Sends one command and returns the counters after it; throws on a refused command.
    @discardableResult
    func command(_ line: String) throws -> Stats {
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(control, $0.baseAddress, $0.count) }) == bytes.count else {
            throw SpawnError(message: "fault proxy: cannot send \(line): \(process.output)")
        }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while read(control, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { break }
            answer.append(byte)
        }
        let data = Data(answer)
        if let stats = try? JSONDecoder().decode(Stats.self, from: data) { return stats }
        throw SpawnError(message: "fault proxy: \(line): \(String(decoding: data, as: UTF8.self))")
    }

    var stats: Stats { get throws { try command("stats") } }

    /// The proxy's output (its start line, any Python error).
    var output: String { process.output }
}
