// Handing freed heap memory back to the kernel after the start-up peak (parsing the
// configuration, restoring and applying requests), so the idle agent's resident size is what it
// keeps, not what it once needed.
import CFencepostLinux

public enum Memory {
    /// Returns the heap's free pages to the kernel. The corresponding C function is `malloc_trim`.
    public static func releaseFreePages() { _ = cfl_malloc_trim() }

    /// Makes every thread allocate from the main heap (glibc's `M_ARENA_MAX` = 1), so what a
    /// helper thread allocated and freed is given back by ``releaseFreePages()``: with an arena
    /// of its own, a SIGHUP's read thread left 2.4 MB more anonymous memory after three reloads
    /// of 3,000 requests (220 kB with 60). Call before any thread starts. The corresponding C
    /// function is `mallopt`.
    public static func useOneHeap() { _ = cfl_malloc_one_arena() }

    /// This process's peak resident set so far, kB (`VmHWM` of `/proc/self/status`: the memory
    /// of this executable image alone, which a parent's `wait4` rusage is not after a `vfork`-
    /// style spawn); nil when it cannot be read.
    public static func peakResidentKilobytes() -> Int? { statusKilobytes("VmHWM:") }

    /// This process's resident set now, kB (`VmRSS` of `/proc/self/status`); nil when it cannot be read.
    public static func residentKilobytes() -> Int? { statusKilobytes("VmRSS:") }

    /// A `kB` line of `/proc/self/status`.
    static func statusKilobytes(_ key: String) -> Int? {
        guard let text = try? FileDescriptor.readFile("/proc/self/status", maximumBytes: 1 << 16) else { return nil }
        var line: [UInt8] = []
        for b in text + [10] {
            if b != 10 { line.append(b); continue }
            if line.starts(with: Array(key.utf8)) {
                var value = 0, digits = 0
                for c in line where c >= 48 && c <= 57 { value = value * 10 + Int(c - 48); digits += 1 }
                return digits > 0 ? value : nil
            }
            line.removeAll(keepingCapacity: true)
        }
        return nil
    }
}
