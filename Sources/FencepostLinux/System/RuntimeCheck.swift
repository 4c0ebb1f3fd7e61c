// What the running binary's Swift runtime promises and the compiler relies on, checked where it
// can be checked: in the Embedded build, CFencepostLinux/embedded.c replaces the runtime's
// BridgeObject retain (its result is used in place of its argument; the toolchain's Embedded
// runtime masked the tag bits off, which corrupts small strings on aarch64).
import CFencepostLinux

public enum RuntimeCheck {
    /// Whether `swift_bridgeObjectRetain` returns its argument unchanged (always in the normal
    /// build; in the Embedded build only with embedded.c's replacement linked in).
    public static var bridgeObjectRetainKeepsBits: Bool { cfl_bridge_object_retain_keeps_bits() == 1 }
}
