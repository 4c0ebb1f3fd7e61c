// One-line shim: the only line of Systemd/ that calls libc (the socket calls are in Socket/).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

@inline(__always) func system_getenv(_ name: String) -> UnsafeMutablePointer<CChar>? { getenv(name) }
