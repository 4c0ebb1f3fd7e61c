// The one place that retries on EINTR, and the two helpers that turn a C return value into a Result.

/// Runs `body` again while it fails with `EINTR`. The only place in the shell that retries on `EINTR`.
@inlinable @inline(__always)
public func retryOnInterrupt<T>(_ body: () -> Result<T, Errno>) -> Result<T, Errno> {
    while true {
        let result = body()
        if case .failure(.interrupted) = result { continue }
        return result
    }
}

/// `value`, or the current `errno` when `value` is -1 (the C convention for a failed call).
@inlinable @inline(__always)
func valueOrErrno<I: FixedWidthInteger>(_ value: I) -> Result<I, Errno> {
    value == -1 ? .failure(.current) : .success(value)
}

/// Success, or the current `errno` when `value` is -1.
@inlinable @inline(__always)
func nothingOrErrno<I: FixedWidthInteger>(_ value: I) -> Result<Void, Errno> {
    value == -1 ? .failure(.current) : .success(())
}
