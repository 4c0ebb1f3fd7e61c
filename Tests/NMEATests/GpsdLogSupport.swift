import CivilTime
import FencepostTestSupport
import Foundation
import NMEA
import Position

/// gpsd's regression logs in `../shared/testdata/gpsd` (see the README there).
enum GpsdLogs {
    /// `<repo root>/../shared/testdata/gpsd`, from this file's path.
    static let folder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // NMEATests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // repo root
        .appendingPathComponent("../shared/testdata/gpsd").standardizedFileURL

    static var available: Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("README.md").path)
    }

    /// Whether a missing folder must fail rather than skip (CI sets this).
    static var required: Bool { TestInputs.required }

    /// The `*.log` names (without folder), sorted.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".log") }.sorted()
    }

    /// The log's bytes without its `#` comment lines (gpsfake strips them too).
    static func input(_ name: String) throws -> [UInt8] {
        let data = try Data(contentsOf: folder.appendingPathComponent(name))
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        var atLineStart = true
        var skipping = false
        for b in data {
            if atLineStart { skipping = b == UInt8(ascii: "#") }
            if !skipping { out.append(b) }
            atLineStart = b == 0x0A
        }
        return out
    }

    /// One gpsd TPV report that has a position.
    struct Report: Hashable {
        var milliseconds: Int64
        var latitude: Double
        var longitude: Double
        var mode: Int
    }

    /// TPV reports with `lat` from `<name>.chk`: those with a `time`, by time (the last report of
    /// each time: gpsd reports an epoch incrementally, sentence by sentence, and the last one is its
    /// final state), and those without a time.
    static func expected(_ name: String) throws -> (timed: [Int64: Report], untimed: [Report]) {
        let text = try String(decoding: Data(contentsOf: folder.appendingPathComponent(name + ".chk")), as: UTF8.self)
        var out: [Int64: Report] = [:]
        var untimed: [Report] = []
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{\"class\":\"TPV\"") {
            // gpsd writes NaN for some unknown values (not JSON): make them null.
            let json = line.replacingOccurrences(of: ":NaN", with: ":null")
            guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double,
                  let mode = object["mode"] as? Int
            else { continue }
            guard let time = object["time"] as? String, let ms = parseTime(time) else {
                untimed.append(Report(milliseconds: 0, latitude: lat, longitude: lon, mode: mode))
                continue
            }
            out[ms] = Report(milliseconds: ms, latitude: lat, longitude: lon, mode: mode)
        }
        return (out, untimed)
    }

    /// `2014-12-31T03:07:19.000Z` → milliseconds since the epoch.
    static func parseTime(_ s: String) -> Int64? {
        let b = Array(s.utf8)
        guard b.count == 24 else { return nil }
        func num(_ r: Range<Int>) -> Int { r.reduce(0) { $0 * 10 + Int(b[$1] - 48) } }
        let day = CivilDays.dayNumber(year: Int64(num(0..<4)), month: num(5..<7), day: num(8..<10))
        let seconds = day * 86_400 + Int64(num(11..<13) * 3600 + num(14..<16) * 60 + num(17..<19))
        return seconds * 1000 + Int64(num(20..<23))
    }

    /// All fixes of `bytes` fed in chunks of the given sizes (cycled); whole when `chunks` is empty.
    static func fixes(_ bytes: [UInt8], chunks: [Int] = []) -> [Fix] {
        var stream = NMEAStream()
        var fixes: [Fix] = []
        bytes.withUnsafeBytes { all in
            if chunks.isEmpty {
                stream.feed(all) { fixes.append($0) }
            } else {
                var i = 0, k = 0
                while i < all.count {
                    let n = min(chunks[k % chunks.count], all.count - i)
                    stream.feed(UnsafeRawBufferPointer(rebasing: all[i..<(i + n)])) { fixes.append($0) }
                    i += n
                    k += 1
                }
            }
        }
        stream.finish { fixes.append($0) }
        return fixes
    }
}
