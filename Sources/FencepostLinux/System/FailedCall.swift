// A failed step of a multi-call setup, for the typed errors that name the C function.

/// Which C function failed and its `errno`: the error of a `Result` chain that runs several calls
/// (open, tcgetattr, tcsetattr …) so that the public error can say which one.
struct FailedCall: Error, Hashable {
    var operation: String
    var errno: Errno

    init(_ operation: String, _ errno: Errno) {
        self.operation = operation
        self.errno = errno
    }
}

extension Result where Failure == Errno {
    /// The same result with the failure labelled by the C function that produced it.
    func labelled(_ operation: String) -> Result<Success, FailedCall> {
        mapError { FailedCall(operation, $0) }
    }
}
