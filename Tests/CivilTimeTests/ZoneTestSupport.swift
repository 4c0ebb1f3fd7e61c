import Foundation
import Glibc
import Testing
@testable import CivilTime
@testable import FencepostLinux
import SeededRandom

extension SplitMix64 {
    /// The seed for a zone test: `$ZONE_TEST_SEED` when set, else `fallback`.
    static func zoneTestSeed(_ fallback: UInt64) -> UInt64 {
        if let s = ProcessInfo.processInfo.environment["ZONE_TEST_SEED"], let v = UInt64(s) { return v }
        return fallback
    }
}

enum ZoneTestFiles {
    static let directory = "/usr/share/zoneinfo"
    static let y1900: Int64 = -2_208_988_800
    static let y2200: Int64 = 7_258_118_400

    static func bytes(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
    }

    /// Every TZif file under the system directory including `right/` and `posix/`, one name per
    /// distinct file (`posix/X` is a link to `X` on Debian: same bytes, tested once).
    static func allDistinctZoneFiles() -> [(name: String, path: String)] {
        let names = SystemZones(directory: directory).allZoneNames(includingVariantTrees: true)
        var seen = Set<String>()
        var result: [(String, String)] = []
        for name in names {
            let path = directory + "/" + name
            guard let real = realpath(path, nil) else { continue }
            let key = String(cString: real)
            free(real)
            if seen.insert(key).inserted { result.append((name, path)) }
        }
        return result
    }
}

/// glibc's `localtime_r` under `TZ=":path"`. The environment is process-wide: callers hold
/// `lock` (only the zone tests set `TZ`).
enum GlibcZoneOracle {
    static let lock = NSLock()

    static func select(path: String) {
        setenv("TZ", ":" + path, 1)
        tzset()
    }

    static func restore(_ saved: String?) {
        if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
        tzset()
    }

    static func offset(_ t: Int64) -> (gmtoff: Int, isDST: Bool)? {
        var time = time_t(t)
        var tm = tm()
        guard localtime_r(&time, &tm) != nil else { return nil }
        return (Int(tm.tm_gmtoff), tm.tm_isdst > 0)
    }
}

extension ZoneRules {
    /// Every transition in `[from, to)`, by stepping `nextTransition(after:)`.
    func transitions(from: Int64, to: Int64) -> [Int64] {
        var result: [Int64] = []
        var t = from - 1
        while let n = nextTransition(after: t), n < to {
            guard n > t else {
                Issue.record("\(identifier): nextTransition(after: \(t)) = \(n) is not after it")
                break
            }
            result.append(n)
            t = n
        }
        return result
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for failure messages.
func zoneTestISO(_ t: Int64) -> String { WallInstant(secondsSinceEpoch: t).description }
