// One-line shims: the only lines of EventLoop/ that call libc.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

@inline(__always) func system_epoll_create1(_ flags: Int32) -> Int32 { epoll_create1(flags) }
@inline(__always) func system_epoll_ctl(_ epfd: Int32, _ op: Int32, _ fd: Int32, _ event: UnsafeMutablePointer<epoll_event>) -> Int32 {
    epoll_ctl(epfd, op, fd, event)
}
@inline(__always) func system_epoll_wait(_ epfd: Int32, _ events: UnsafeMutablePointer<epoll_event>, _ max: Int32, _ timeout: Int32) -> Int32 {
    epoll_wait(epfd, events, max, timeout)
}
@inline(__always) func system_timerfd_create(_ clock: clockid_t, _ flags: Int32) -> Int32 { timerfd_create(clock, flags) }
@inline(__always) func system_timerfd_settime(_ fd: Int32, _ flags: Int32, _ new: UnsafePointer<itimerspec>) -> Int32 {
    timerfd_settime(fd, flags, new, nil)
}
