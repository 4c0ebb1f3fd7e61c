// One-line shims: the only lines of System/ that call libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

@inline(__always) func system_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
@inline(__always) func system_write(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }
@inline(__always) func system_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
@inline(__always) func system_fstat(_ fd: Int32, _ st: inout stat) -> Int32 { fstat(fd, &st) }
@inline(__always) func system_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) func system_fcntl(_ fd: Int32, _ cmd: Int32, _ arg: Int32) -> Int32 { fcntl(fd, cmd, arg) }
@inline(__always) func system_clock_gettime(_ clock: clockid_t, _ ts: UnsafeMutablePointer<timespec>) -> Int32 {
    clock_gettime(clock, ts)
}
@inline(__always) func system_uname(_ name: UnsafeMutablePointer<utsname>) -> Int32 { uname(name) }
@inline(__always) func system_sysconf(_ name: Int32) -> Int { sysconf(name) }
