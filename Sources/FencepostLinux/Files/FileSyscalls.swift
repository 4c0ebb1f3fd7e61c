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
let MADV_DONTNEED_VALUE: Int32 = Int32(MADV_DONTNEED)
let EBADF_VALUE: Int32 = EBADF
