// What machine this is: the kernel's name for itself and the processors online. For reports that
// must say where a figure was measured (`fencepost bench --json`).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// The kernel's identification, as `uname -srvm` prints it.
public struct KernelName: Hashable, Sendable, CustomStringConvertible {
    /// "Linux".
    public var system: String
    /// "6.1.0-18-amd64".
    public var release: String
    /// The build string: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)".
    public var version: String
    /// The hardware: "x86_64", "aarch64", "armv7l".
    public var machine: String

    public var description: String { "\(system) \(release) \(machine)" }
}

public enum MachineInfo {
    /// The running kernel's name, release, version and hardware.
    /// The corresponding C function is `uname`.
    public static func kernel() throws(Errno) -> KernelName { try _kernel().get() }

    /// Processors currently online (at least 1).
    /// The corresponding C function is `sysconf(_SC_NPROCESSORS_ONLN)`.
    public static func onlineProcessors() -> Int { max(1, (try? _sysconf(Int32(_SC_NPROCESSORS_ONLN)).get()) ?? 1) }

    // MARK: Result layer

    static func _kernel() -> Result<KernelName, Errno> {
        var u = utsname()
        return valueOrErrno(system_uname(&u)).map { _ in
            KernelName(system: field(&u.sysname), release: field(&u.release),
                       version: field(&u.version), machine: field(&u.machine))
        }
    }

    static func _sysconf(_ name: Int32) -> Result<Int, Errno> { valueOrErrno(system_sysconf(name)) }

    /// A NUL-terminated fixed-size `char[]` of `utsname` as a String.
    private static func field<T>(_ tuple: inout T) -> String {
        withUnsafeBytes(of: &tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
