@testable import FencepostLinux
import Foundation
import Testing

@Suite struct CodePagesTests {
    static func fileKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func parsesReadOnlyFileMappingsWithTheirPrivatePages() {
        let smaps = """
            55e33f04a000-55e33f926000 r-xp 00000000 fd:01 123 /usr/bin/fencepost-agent
            Size:               9072 kB
            Anonymous:             0 kB
            55e33f926000-55e33f963000 r--p 008dc000 fd:01 123 /usr/bin/fencepost-agent
            Anonymous:            12 kB
            7f0000000000-7f0000001000 r-xp 00000000 00:00 0 
            Anonymous:             4 kB
            7f0000002000-7f0000004000 r-xp 00001000 fd:01 456 /usr/lib/with text relocations.so
            Rss:                   8 kB
            Anonymous:             4 kB
            7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
            7f0000005000-7f0000006000 rw-p 00002000 fd:01 456 /usr/lib/with text relocations.so
            Anonymous:             4 kB
            7f0000008000-7f000000a000 r--p 00000000 fd:01 789 /var/lib/fencepost/state.db.zones
            Anonymous:             0 kB
            7f000000b000-7f000000c000 rw-s 00000000 fd:01 790 /var/lib/fencepost/state.db-shm
            Anonymous:             0 kB
            """
        #expect(ReadOnlyFileMapping.parse(smaps) == [
            ReadOnlyFileMapping(start: 0x55e33f04a000, end: 0x55e33f926000, path: "/usr/bin/fencepost-agent", anonymousKilobytes: 0),
            ReadOnlyFileMapping(start: 0x55e33f926000, end: 0x55e33f963000, path: "/usr/bin/fencepost-agent", anonymousKilobytes: 12),
            ReadOnlyFileMapping(start: 0x7f0000002000, end: 0x7f0000004000, path: "/usr/lib/with text relocations.so", anonymousKilobytes: 4,
                                residentKilobytes: 8),
            ReadOnlyFileMapping(start: 0x7f0000008000, end: 0x7f000000a000, path: "/var/lib/fencepost/state.db.zones", anonymousKilobytes: 0),
        ])
    }

    /// Only mappings the kernel shows resident and without private pages are dropped. qemu-user
    /// answers smaps with zeros (`Rss: 0 kB`, `Anonymous: 0 kB`) for every mapping, RELRO included:
    /// such a mapping is kept (dropping it would reset a RELRO page: the GOT, the stack guard).
    @Test func keepsMappingsWithoutResidentCounts() {
        let smaps = """
            00400000-00500000 r-xp 00000000 fd:01 123 /usr/bin/fencepost-agent
            Size:               1024 kB
            Rss:                 600 kB
            Anonymous:             0 kB
            00500000-00502000 r--p 00100000 fd:01 123 /usr/bin/fencepost-agent
            Size:                  8 kB
            Rss:                   8 kB
            Anonymous:             8 kB
            3f000000-3f001000 r--p 0001f000 fd:01 9 /usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3
            Size:                  4 kB
            Rss:                   0 kB
            Anonymous:             0 kB
            """
        #expect(ReadOnlyFileMapping.parse(smaps).map(\.mayDrop) == [true, false, false])
    }

    /// The pages leave the page table (file pages drop) and the code still runs afterwards.
    @Test func dropsCodePagesAndTheCodeStillRuns() throws {
        let before = try Self.fileKilobytes()
        let released = Memory.releaseCodePages()
        let after = try Self.fileKilobytes()
        #expect(released.mappings > 0 && released.bytes > 0, "\(released)")
        #expect(after < before, "RssFile \(before) kB → \(after) kB")
        // Code in the dropped mappings runs again (faulted back from the page cache).
        #expect([3, 1, 2].sorted() == [1, 2, 3])
        #expect("\(0.5 + 0.25)" == "0.75")
    }
}
