// `fencepost-agent zones build IN -o OUT [--max-radius M] [--if-changed] [--retain-replaced]`: the
// agent's own build of a zone set,
// the command a SIGHUP runs as a child process (so `fencepost run` and the lean agent both can:
// `fencepost zones build` takes the same arguments).
import FencepostLinux
import LocalNotifications

/// The lean agent's `zones build`.
public enum ZoneSetBuildCommand {
    /// Runs `zones build` with `arguments` (after "zones build"); returns the exit status:
    /// 0 built, 64 usage, 65 a bad feature, 66 the GeoJSON cannot be read, 74 the set cannot be
    /// written (the codes of `fencepost zones build`).
    public static func run(_ arguments: [String]) -> Int32 {
        var input: String?, output: String?
        var limits = RequestLimits()
        var ifChanged = false, retainReplaced = false
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if (a == "-o" || a == "--output"), i + 1 < arguments.count { output = arguments[i + 1]; i += 2; continue }
            if a == "--max-radius", i + 1 < arguments.count, let r = Double(arguments[i + 1]), r > 0 {
                limits.maximumRadius = r; i += 2; continue
            }
            if a == "--if-changed" { ifChanged = true; i += 1; continue }
            if a == "--retain-replaced" { retainReplaced = true; i += 1; continue }
            if input == nil, !a.hasPrefix("-") { input = a; i += 1; continue }
            try? FileDescriptor.standardError.writeAll("usage: fencepost-agent zones build IN.geojson -o OUT [--max-radius METRES] [--if-changed] [--retain-replaced]\n")
            return 64
        }
        guard let input, let output else {
            try? FileDescriptor.standardError.writeAll("usage: fencepost-agent zones build IN.geojson -o OUT [--max-radius METRES]\n")
            return 64
        }
        if ifChanged, ZoneSetFiles.isCurrent(output, geojsonPath: input, limits: limits) { return ZoneSetFiles.unchangedStatus }
        do {
            let built = try ZoneSetFiles.build(geojsonPath: input, output: output, limits: limits, retainReplaced: retainReplaced)
            let peak = Memory.peakResidentKilobytes().map { ", peak \($0) kB resident" } ?? ""
            try? FileDescriptor.standardOutput.writeAll("\(output): \(built.zones) zones, \(built.bytes) bytes\(peak)\n")
            return 0
        } catch {
            try? FileDescriptor.standardError.writeAll("fencepost-agent zones build: \(PrintableText.escaped("\(error)"))\n")
            switch error.kind {
            case .input: return 66
            case .content: return 65
            case .output: return 74
            }
        }
    }
}
