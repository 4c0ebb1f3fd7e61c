// The one place mapped and atomically replaced files touch libc.
import CFencepostLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

@inline(__always) func system_mmap_read(_ fd: Int32, _ length: Int) -> UnsafeMutableRawPointer? {
    let p = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0)
    return p == UnsafeMutableRawPointer(bitPattern: -1) ? nil : p   // MAP_FAILED (a C cast: not imported in Embedded Swift)
}
@inline(__always) func system_munmap(_ p: UnsafeMutableRawPointer, _ length: Int) -> Int32 { munmap(p, length) }
@inline(__always) func system_madvise(_ p: UnsafeMutableRawPointer, _ length: Int, _ advice: Int32) -> Int32 { madvise(p, length, advice) }
@inline(__always) func system_write_out_range(_ fd: Int32, _ offset: Int, _ count: Int) -> Int32 {
    cfl_write_out_range(fd, Int64(offset), Int64(count))
}
@inline(__always) func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
@inline(__always) func system_link(_ from: String, _ to: String) -> Int32 { link(from, to) }
@inline(__always) func system_rename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
@inline(__always) func system_getpid() -> Int32 { getpid() }
/// `fcntl(fd, F_SETLEASE, F_RDLCK)`: the kernel tells this process (SIGIO) before another one
/// opens the file for writing or truncates it, and holds that writer back until the lease is let
/// go (at most /proc/sys/fs/lease-break-time seconds). Values of linux/fcntl.h (not exported by
/// the Glibc module without _GNU_SOURCE).
@inline(__always) func system_take_read_lease(_ fd: Int32) -> Int32 { fcntl(fd, 1024 /* F_SETLEASE */, 0 /* F_RDLCK */) }
/// `fcntl(fd, F_GETLEASE)`: F_RDLCK (0) while the read lease holds, F_UNLCK (2) once a writer
/// has asked for it to be broken.
@inline(__always) func system_lease(_ fd: Int32) -> Int32 { fcntl(fd, 1025 /* F_GETLEASE */) }
@inline(__always) func system_release_lease(_ fd: Int32) -> Int32 { fcntl(fd, 1024 /* F_SETLEASE */, 2 /* F_UNLCK */) }
let F_RDLCK_VALUE: Int32 = 0
let MADV_DONTNEED_VALUE: Int32 = Int32(MADV_DONTNEED)
let EBADF_VALUE: Int32 = EBADF
