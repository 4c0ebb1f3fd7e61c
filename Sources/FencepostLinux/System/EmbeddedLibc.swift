// What the Glibc module gives the normal build and the Embedded Swift build (board/cross-build)
// lacks: C's `errno` (a macro) and the variadic `open` and `fcntl`, here with the signatures of the
// Glibc overlay's Swift versions, so that the rest of the shell reads the same in both builds.
#if hasFeature(Embedded)
import CFencepostLinux

/// The calling thread's `errno` (C's `errno` macro, through CFencepostLinux/embedded.c).
@usableFromInline package var errno: Int32 {
    get { cfl_errno() }
    set { cfl_set_errno(newValue) }
}

/// Opens a file. The corresponding C function is `open`.
package func open(_ path: UnsafePointer<CChar>, _ oflag: Int32) -> Int32 {
    cfl_open(path, oflag, 0)
}

/// Opens or creates a file with `mode`. The corresponding C function is `open`.
package func open(_ path: UnsafePointer<CChar>, _ oflag: Int32, _ mode: mode_t) -> Int32 {
    cfl_open(path, oflag, UInt32(mode))
}

/// `fcntl` without an argument (`F_GETFL`, `F_GETFD`). The corresponding C function is `fcntl`.
package func fcntl(_ fd: Int32, _ cmd: Int32) -> Int32 {
    cfl_fcntl(fd, cmd, 0)
}

/// `fcntl` with an int argument (`F_SETFL`, `F_SETFD`). The corresponding C function is `fcntl`.
package func fcntl(_ fd: Int32, _ cmd: Int32, _ value: Int32) -> Int32 {
    cfl_fcntl(fd, cmd, value)
}
#endif
