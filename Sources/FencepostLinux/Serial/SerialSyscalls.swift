// One-line shims: the only lines of Serial/ that call libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

@inline(__always) func system_tcgetattr(_ fd: Int32, _ t: UnsafeMutablePointer<termios>) -> Int32 { tcgetattr(fd, t) }
@inline(__always) func system_tcsetattr(_ fd: Int32, _ when: Int32, _ t: UnsafePointer<termios>) -> Int32 { tcsetattr(fd, when, t) }
@inline(__always) func system_cfmakeraw(_ t: UnsafeMutablePointer<termios>) { cfmakeraw(t) }
@inline(__always) func system_cfsetispeed(_ t: UnsafeMutablePointer<termios>, _ s: speed_t) -> Int32 { cfsetispeed(t, s) }
@inline(__always) func system_cfsetospeed(_ t: UnsafeMutablePointer<termios>, _ s: speed_t) -> Int32 { cfsetospeed(t, s) }
@inline(__always) func system_tcflush(_ fd: Int32, _ queue: Int32) -> Int32 { tcflush(fd, queue) }
@inline(__always) func system_posix_openpt(_ flags: Int32) -> Int32 { cfl_posix_openpt(flags) }
@inline(__always) func system_grantpt(_ fd: Int32) -> Int32 { cfl_grantpt(fd) }
@inline(__always) func system_unlockpt(_ fd: Int32) -> Int32 { cfl_unlockpt(fd) }
@inline(__always) func system_ptsname_r(_ fd: Int32, _ buf: UnsafeMutablePointer<CChar>, _ n: Int) -> Int32 { cfl_ptsname_r(fd, buf, n) }
