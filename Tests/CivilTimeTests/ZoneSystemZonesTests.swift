import Foundation
import Glibc
import Testing
@testable import CivilTime
@testable import FencepostLinux

@Suite("Zone files on the system (FencepostLinux.SystemZones)")
struct ZoneSystemZonesTests {
    let zones = SystemZones(directory: ZoneTestFiles.directory)
    let july2024 = zoneTestSeconds(2024, 7, 1)

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "fencepost-zones-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)   // atomic: a new inode
    }

    @Test func rulesByName() throws {
        let berlin = try zones.rules(named: "Europe/Berlin")
        #expect(berlin.identifier == "Europe/Berlin")
        #expect(berlin.offset(at: WallInstant(secondsSinceEpoch: july2024)) == ZoneOffset(utcOffsetSeconds: 7200, isDST: true, abbreviation: "CEST"))
        let again = try zones.rules(named: "Europe/Berlin")         // from the cache
        #expect(again._times == berlin._times)
        #expect(try zones.rules(named: "UTC").utcOffset(atSecondsSinceEpoch: july2024) == 0)
    }

    @Test(arguments: ["", "/etc/passwd", "../etc/passwd", "Europe/../../etc/passwd", "Europe/..", "a\u{0}b"])
    func namesThatCouldEscapeAreRejected(name: String) {
        #expect(throws: ZoneError.invalidZoneName(name)) { try zones.rules(named: name) }
    }

    @Test func unknownAndBadFiles() throws {
        #expect(throws: ZoneError.unknownZone("Mars/Olympus", searchedDirectory: ZoneTestFiles.directory)) {
            try zones.rules(named: "Mars/Olympus")
        }
        #expect(throws: ZoneError.unknownZone("America", searchedDirectory: ZoneTestFiles.directory)) {
            try zones.rules(named: "America")                          // a directory
        }
        #expect(throws: ZoneError.unknownZone("UTC/x", searchedDirectory: ZoneTestFiles.directory)) {
            try zones.rules(named: "UTC/x")                            // ENOTDIR
        }
        if FileManager.default.fileExists(atPath: ZoneTestFiles.directory + "/zone.tab") {
            #expect(throws: ZoneError.badMagic(zone: "zone.tab")) { try zones.rules(named: "zone.tab") }
        }
        #expect(throws: ZoneError.unreadableFile(path: "/nonexistent/zone", errno: ENOENT, message: "No such file or directory")) {
            try zones.rules(atPath: "/nonexistent/zone")
        }
    }

    @Test func ownDirectoryAndReplacedFiles() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let custom = SystemZones(directory: dir + "/")
        #expect(custom.directory == dir)
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/Europe/Berlin"), to: dir + "/Test/Zone")
        #expect(try custom.rules(named: "Test/Zone").utcOffset(atSecondsSinceEpoch: july2024) == 7200)
        // Replaced (new inode): noticed.
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/Asia/Tokyo"), to: dir + "/Test/Zone")
        #expect(try custom.rules(named: "Test/Zone").utcOffset(atSecondsSinceEpoch: july2024) == 32400)
        // Rewritten in place with other contents: noticed (size and mtime).
        let handle = try #require(FileHandle(forWritingAtPath: dir + "/Test/Zone"))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/America/New_York")))
        try handle.close()
        #expect(try custom.rules(named: "Test/Zone").utcOffset(atSecondsSinceEpoch: july2024) == -14400)
        // Garbage: the parse error names the zone.
        try Self.write(Array("TZif2".utf8), to: dir + "/Test/Zone")
        #expect(throws: ZoneError.truncated(zone: "Test/Zone", section: .header, atByte: 5)) { try custom.rules(named: "Test/Zone") }
    }

    @Test func environmentTZDIR() {
        GlibcZoneOracle.lock.lock()
        defer { GlibcZoneOracle.lock.unlock() }
        let saved = getenv("TZDIR").map { String(cString: $0) }
        defer { if let saved { setenv("TZDIR", saved, 1) } else { unsetenv("TZDIR") } }
        setenv("TZDIR", "/usr/share/zoneinfo/.", 1)     // the same directory, spelled recognisably
        #expect(SystemZones().directory == "/usr/share/zoneinfo/.")
        setenv("TZDIR", "", 1)
        #expect(SystemZones().directory == "/usr/share/zoneinfo")
        unsetenv("TZDIR")
        #expect(SystemZones().directory == "/usr/share/zoneinfo")
    }

    // MARK: TZ

    @Test func deviceZoneFromLocaltime() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fm = FileManager.default
        let link = dir + "/localtime"
        // Absolute link into the system zone directory.
        try fm.createSymbolicLink(atPath: link, withDestinationPath: ZoneTestFiles.directory + "/Europe/Berlin")
        var z = try zones.deviceZone(tzVariable: nil, localtimePath: link)
        #expect(z.identifier == "Europe/Berlin" && z.utcOffset(atSecondsSinceEpoch: july2024) == 7200)
        // Relative link into another zoneinfo directory.
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/Asia/Tokyo"), to: dir + "/share/zoneinfo/Asia/Tokyo")
        try fm.createDirectory(atPath: dir + "/etc", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: dir + "/etc/localtime", withDestinationPath: "../share/zoneinfo/Asia/Tokyo")
        z = try zones.deviceZone(tzVariable: nil, localtimePath: dir + "/etc/localtime")
        #expect(z.identifier == "Asia/Tokyo" && z.utcOffset(atSecondsSinceEpoch: july2024) == 32400)
        // Re-pointed while running: noticed.
        try fm.removeItem(atPath: link)
        try fm.createSymbolicLink(atPath: link, withDestinationPath: ZoneTestFiles.directory + "/America/New_York")
        z = try zones.deviceZone(tzVariable: nil, localtimePath: link)
        #expect(z.identifier == "America/New_York" && z.utcOffset(atSecondsSinceEpoch: july2024) == -14400)
        // A link without zoneinfo/ in it, and a plain copy: "localtime".
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/Asia/Kolkata"), to: dir + "/other/IST")
        try fm.removeItem(atPath: link)
        try fm.createSymbolicLink(atPath: link, withDestinationPath: dir + "/other/IST")
        z = try zones.deviceZone(tzVariable: nil, localtimePath: link)
        #expect(z.identifier == "localtime" && z.utcOffset(atSecondsSinceEpoch: july2024) == 19800)
        try fm.removeItem(atPath: link)
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/Asia/Kolkata"), to: link)
        #expect(try zones.deviceZone(tzVariable: nil, localtimePath: link).identifier == "localtime")
        // None at all: UTC, as glibc.
        z = try zones.deviceZone(tzVariable: nil, localtimePath: dir + "/missing")
        #expect(z.identifier == "UTC" && z.utcOffset(atSecondsSinceEpoch: july2024) == 0)
        // A broken one: the parse error.
        try Self.write(Array("not a zone".utf8), to: dir + "/broken")
        #expect(throws: ZoneError.badMagic(zone: "localtime")) { try zones.deviceZone(tzVariable: nil, localtimePath: dir + "/broken") }
    }

    @Test func deviceZoneFromTZ() throws {
        func id(_ tz: String) throws -> String { try zones.deviceZone(tzVariable: tz, localtimePath: "/nonexistent").identifier }
        #expect(try id("") == "UTC")
        #expect(try id(":") == "UTC")
        #expect(try id(":Europe/Paris") == "Europe/Paris")
        #expect(try id("Europe/Paris") == "Europe/Paris")
        #expect(try id(":/usr/share/zoneinfo/Asia/Tokyo") == "Asia/Tokyo")
        #expect(try id("/usr/share/zoneinfo/Asia/Tokyo") == "Asia/Tokyo")
        #expect(try id("EST5EDT") == "EST5EDT")                        // a file of that name wins
        let rule = try zones.deviceZone(tzVariable: "EST5EDT,M3.2.0,M11.1.0")
        #expect(rule.identifier == "EST5EDT,M3.2.0,M11.1.0" && rule.utcOffset(atSecondsSinceEpoch: july2024) == -14400)
        #expect(try zones.deviceZone(tzVariable: ":<+0330>-3:30").utcOffset(atSecondsSinceEpoch: july2024) == 12600)
        #expect(throws: ZoneError.unknownZone("Nowhere/Zone", searchedDirectory: ZoneTestFiles.directory)) { try id("Nowhere/Zone") }
        #expect(throws: ZoneError.unknownZone("Nowhere", searchedDirectory: ZoneTestFiles.directory)) { try id(":Nowhere") }
        #expect(throws: ZoneError.invalidZoneName("../etc/passwd")) { try id("../etc/passwd") }
        #expect(throws: ZoneError.unreadableFile(path: "/nonexistent/zone", errno: ENOENT, message: "No such file or directory")) {
            try id(":/nonexistent/zone")
        }
    }

    // MARK: Listing

    @Test func allZoneNamesListsLoadableZones() throws {
        let names = zones.allZoneNames()
        #expect(names == names.sorted())
        #expect(names.count > 300)
        for expected in ["Europe/Berlin", "America/Argentina/Buenos_Aires", "UTC", "Factory", "EST5EDT"] {
            #expect(names.contains(expected), "\(expected)")
        }
        for absent in ["posixrules", "localtime", "zone.tab", "tzdata.zi", "leapseconds", "iso3166.tab"] {
            #expect(!names.contains(absent), "\(absent)")
        }
        #expect(!names.contains { $0.hasPrefix("right/") || $0.hasPrefix("posix/") })
        for name in names { _ = try zones.rules(named: name) }     // every one loads
        let all = zones.allZoneNames(includingVariantTrees: true)
        #expect(all.contains("right/Europe/Berlin") && all.contains("posix/Europe/Berlin"))
    }

    @Test func listingSurvivesLinkLoops() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(ZoneTestFiles.bytes(ZoneTestFiles.directory + "/UTC"), to: dir + "/Area/City")
        try FileManager.default.createSymbolicLink(atPath: dir + "/Area/loop", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: dir + "/Alias", withDestinationPath: "Area/City")
        try FileManager.default.createSymbolicLink(atPath: dir + "/Dangling", withDestinationPath: "nowhere")
        try Self.write(Array("text".utf8), to: dir + "/notes.txt")
        #expect(SystemZones(directory: dir).allZoneNames() == ["Alias", "Area/City"])
    }
}
