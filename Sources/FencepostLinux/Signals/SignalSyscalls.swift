// One-line shims: the only lines of Signals/ that call libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

@inline(__always) func system_sigemptyset(_ set: UnsafeMutablePointer<sigset_t>) -> Int32 { sigemptyset(set) }
@inline(__always) func system_sigaddset(_ set: UnsafeMutablePointer<sigset_t>, _ signal: Int32) -> Int32 { sigaddset(set, signal) }
@inline(__always) func system_sigprocmask(_ how: Int32, _ set: UnsafePointer<sigset_t>, _ old: UnsafeMutablePointer<sigset_t>?) -> Int32 {
    sigprocmask(how, set, old)
}
@inline(__always) func system_signalfd(_ fd: Int32, _ set: UnsafePointer<sigset_t>, _ flags: Int32) -> Int32 { signalfd(fd, set, flags) }
