// Dropping the code and read-only data pages the start-up used from the page table, so that the
// idle agent's resident size is the code its loop runs, not everything that ran once (the
// configuration parser, the GeoJSON reader, the schema migration, SQLite's query planner, the
// dynamic linker's walk through every library's symbol tables …).
//
// Each read-only file mapping (`r-xp` or `r--p` in /proc/self/maps: code, constants, symbol
// tables, a mapped zone set) that holds no private copy of a page (`Anonymous: 0 kB` in
// /proc/self/smaps: nothing was written into it, so the file is its exact content) gets
// `madvise(MADV_DONTNEED)`: its pages leave this process's page table but stay in the kernel's
// page cache; the next use is a minor fault that maps them back from memory, no disk read. A
// mapping with private pages (text relocations, RELRO after relocation) is left alone: dropping
// them would bring the unrelocated file content back. So is a mapping smaps shows with no resident
// page at all (not a kernel's count), and so is one that /proc/self/maps does not list with the
// same range: under qemu-user, /proc/self/maps is the guest's address space but smaps is the
// emulator's own, and advising those ranges in the guest frees the guest's own pages (the stack
// guard and GOT of a 32-bit ARM agent under qemu-arm: it then aborts with "stack smashing
// detected" at its first return past start-up).
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

extension Memory {
    /// What ``releaseCodePages()`` did.
    public struct CodePagesReleased: Sendable {
        /// Read-only file mappings advised, and their total size in bytes.
        public var mappings: Int
        public var bytes: Int
        /// Read-only file mappings skipped because they hold private (written) pages.
        public var skipped: Int
    }

    /// Drops the pages of the read-only file mappings (code, constants, symbol tables) from this
    /// process's page table (they stay in the page cache). Call after start-up, when the code that
    /// will run again is the loop's; link with `-z now`, or the first call of each library function
    /// afterwards walks the symbol tables back in.
    /// The corresponding C function is `madvise(MADV_DONTNEED)`.
    ///
    /// - Complexity: reads /proc/self/smaps once (tens of mappings).
    @discardableResult
    public static func releaseCodePages() -> CodePagesReleased {
        var result = CodePagesReleased(mappings: 0, bytes: 0, skipped: 0)
        guard let bytes = try? FileDescriptor.readFile("/proc/self/smaps") else { return result }
        let text = String(decoding: bytes, as: UTF8.self)
        let listed = (try? FileDescriptor.readFile("/proc/self/maps")).map { ReadOnlyFileMapping.ranges(String(decoding: $0, as: UTF8.self)) } ?? []
        for mapping in ReadOnlyFileMapping.parse(text) {
            guard mapping.mayDrop, listed.contains(mapping.range) else { result.skipped += 1; continue }
            let length = Int(clamping: mapping.end - mapping.start)
            guard let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(address, length, MADV_DONTNEED) == 0 {
                result.mappings += 1
                result.bytes &+= length
            }
        }
        return result
    }
}

/// A read-only (executable or not), private, file-backed mapping of /proc/self/smaps.
struct ReadOnlyFileMapping: Equatable {
    /// Addresses as UInt: on a 32-bit board mappings lie above 2 GiB (0xb6…), past Int.
    var start: UInt
    var end: UInt
    var path: String
    /// The mapping's `Anonymous:` field: pages written (copied on write), kB.
    var anonymousKilobytes: Int
    /// The mapping's `Rss:` field, kB (-1 when absent).
    var residentKilobytes: Int = -1

    /// Whether its pages may leave the page table: resident per the kernel, none of them private.
    var mayDrop: Bool { anonymousKilobytes == 0 && residentKilobytes > 0 }

    /// Its address range as /proc/self/maps writes it (`start-end`, hex).
    var range: String { String(start, radix: 16) + "-" + String(end, radix: 16) }

    /// The address ranges (`start-end`) of every mapping in /proc/self/maps text.
    static func ranges(_ maps: String) -> Set<String> {
        var out: Set<String> = []
        for line in maps.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let first = line.split(separator: " ", maxSplits: 1).first else { continue }
            let parts = first.split(separator: "-")
            guard parts.count == 2, let s = UInt(parts[0], radix: 16), let e = UInt(parts[1], radix: 16) else { continue }
            out.insert(String(s, radix: 16) + "-" + String(e, radix: 16))
        }
        return out
    }

    /// The `r-xp` and `r--p` mappings of a file (path beginning with '/') in smaps text.
    static func parse(_ smaps: String) -> [ReadOnlyFileMapping] {
        var out: [ReadOnlyFileMapping] = []
        var current: ReadOnlyFileMapping?
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), fields.count >= 5, !first.hasSuffix(":") {
                if let c = current { out.append(c) }
                current = nil
                let range = first.split(separator: "-")
                guard fields[1] == "r-xp" || fields[1] == "r--p", fields.count >= 6, fields[5].hasPrefix("/"),
                      range.count == 2, let s = UInt(range[0], radix: 16), let e = UInt(range[1], radix: 16), e > s
                else { continue }
                current = ReadOnlyFileMapping(start: s, end: e, path: fields[5...].joined(separator: " "), anonymousKilobytes: -1)
            } else if first == "Anonymous:", fields.count >= 2, current != nil {
                current!.anonymousKilobytes = Int(fields[1]) ?? -1
            } else if first == "Rss:", fields.count >= 2, current != nil {
                current!.residentKilobytes = Int(fields[1]) ?? -1
            }
        }
        if let c = current { out.append(c) }
        return out
    }
}
