// A pause that a signal or a vanished reader ends: for a client that polls on a timer (`status
// --follow`) and must stop on Ctrl-C or SIGTERM whatever it inherited (a signal blocked or
// ignored by its parent stays pending here, because the receiver blocks it), and when the reader
// of its output pipe has gone away (`| head -1`), even while it has nothing to write.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

extension SignalReceiver {
    /// What ended a ``pause(milliseconds:watching:)``.
    public enum PauseEnd: Hashable, Sendable {
        /// The time passed.
        case timedOut
        /// One of the receiver's signals arrived.
        case signal(ReceivedSignal)
        /// The watched descriptor reported an error or a hang-up: the read end of a pipe or
        /// socket was closed, or the terminal went away.
        case outputClosed
    }

    /// Waits up to `milliseconds` for one of the receiver's signals, or for `output` to report
    /// `POLLERR`/`POLLHUP` (asked for no events: a regular file never reports either).
    ///
    /// An interrupted wait (`EINTR`) ends as ``PauseEnd/timedOut``: the caller's loop polls
    /// again, no sooner than it would have.
    /// The corresponding C function is `poll` (then `read` of the signalfd).
    public func pause(milliseconds: Int32, watching output: FileDescriptor) throws(Errno) -> PauseEnd {
        try _pause(milliseconds: milliseconds, watching: output).get()
    }

    func _pause(milliseconds: Int32, watching output: FileDescriptor) -> Result<PauseEnd, Errno> {
        var fds = [pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: output.rawValue, events: 0, revents: 0)]
        let ready = fds.withUnsafeMutableBufferPointer { system_poll($0.baseAddress!, 2, milliseconds) }
        if ready == -1 {
            let e = Errno.current
            return e == .interrupted ? .success(.timedOut) : .failure(e)
        }
        if fds[0].revents & Int16(POLLIN) != 0 {
            switch retryOnInterrupt({ _receive() }) {
            case .success(let s?): return .success(.signal(s))
            case .success(nil): break
            case .failure(let e): return .failure(e)
            }
        }
        if fds[1].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .success(.outputClosed) }
        return .success(.timedOut)
    }
}
