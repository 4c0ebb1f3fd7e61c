import FencepostTestSupport

/// These tests' name for ``Binaries`` (the built binaries run to their end);
/// `FencepostLinux.ChildProcess`, the product's own spawn, is named in full where a test uses it.
typealias ChildProcess = Binaries
