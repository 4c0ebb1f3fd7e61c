// One-line shims: the only lines of Socket/ and Systemd/ that call libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

@inline(__always) func system_socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32 { socket(domain, type, proto) }
@inline(__always) func system_bind(_ fd: Int32, _ addr: UnsafePointer<sockaddr>, _ len: socklen_t) -> Int32 { bind(fd, addr, len) }
@inline(__always) func system_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
@inline(__always) func system_connect(_ fd: Int32, _ addr: UnsafePointer<sockaddr>, _ len: socklen_t) -> Int32 { connect(fd, addr, len) }
@inline(__always) func system_accept4(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: UnsafeMutablePointer<socklen_t>?, _ flags: Int32) -> Int32 {
    cfl_accept4(fd, addr, len, flags)
}
@inline(__always) func system_send(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int, _ flags: Int32) -> Int { send(fd, buf, n, flags) }
@inline(__always) func system_sendto(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int, _ flags: Int32, _ addr: UnsafePointer<sockaddr>, _ len: socklen_t) -> Int {
    sendto(fd, buf, n, flags, addr, len)
}
@inline(__always) func system_getsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer, _ len: UnsafeMutablePointer<socklen_t>) -> Int32 {
    getsockopt(fd, level, name, value, len)
}
@inline(__always) func system_poll(_ fds: UnsafeMutablePointer<pollfd>, _ n: nfds_t, _ timeout: Int32) -> Int32 { poll(fds, n, timeout) }
@inline(__always) func system_unlink(_ path: String) -> Int32 { unlink(path) }
@inline(__always) func system_lstat(_ path: String, _ st: UnsafeMutablePointer<stat>) -> Int32 { lstat(path, st) }
@inline(__always) func system_chmod(_ path: String, _ mode: mode_t) -> Int32 { chmod(path, mode) }
