// A pseudo-terminal pair: a stand-in serial device for tests and for replaying a recorded NMEA
// log into the agent's serial reader.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CFencepostLinux

/// A new pty: write to ``master`` and the bytes arrive at whoever opened ``devicePath`` (a
/// ``SerialPort``); closing the master hangs the device up, like unplugging a USB adapter.
public final class PseudoTerminal {
    /// The controlling side, blocking, close-on-exec. Closed by ``closeMaster()`` or with the object.
    public let master: FileDescriptor
    /// The device path of the other side, e.g. `/dev/pts/3`.
    public let devicePath: String
    private var isOpen = true

    /// The corresponding C functions are `posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)`,
    /// `grantpt`, `unlockpt` and `ptsname_r`.
    public init() throws(Errno) {
        let fd = try retryOnInterrupt { valueOrErrno(system_posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) }.get()
        var name = [CChar](repeating: 0, count: 128)
        let result = nothingOrErrno(system_grantpt(fd))
            .flatMap { nothingOrErrno(system_unlockpt(fd)) }
            .flatMap { () -> Result<Void, Errno> in
                // ptsname_r returns the error number instead of setting errno.
                let r = system_ptsname_r(fd, &name, name.count)
                return r == 0 ? .success(()) : .failure(Errno(rawValue: r))
            }
        if case .failure(let e) = result {
            _ = system_close(fd)
            throw e
        }
        master = FileDescriptor(rawValue: fd)
        devicePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Closes the master: the device side sees a hang-up. Idempotent.
    public func closeMaster() {
        guard isOpen else { return }
        isOpen = false
        _ = master._close()
    }

    deinit { closeMaster() }
}
