// Handing freed heap memory back to the kernel after the start-up peak (parsing the
// configuration, restoring and applying requests), so the idle agent's resident size is what it
// keeps, not what it once needed.
import CFencepostLinux

public enum Memory {
    /// Returns the heap's free pages to the kernel. The corresponding C function is `malloc_trim`.
    public static func releaseFreePages() { _ = cfl_malloc_trim() }
}
