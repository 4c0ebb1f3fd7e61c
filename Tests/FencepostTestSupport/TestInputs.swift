import Foundation

/// What tests need from outside the repository: `../shared/testdata`, Debian programs
/// (`board/install-deps`), PyPI oracles. Missing, such a test is skipped with a message naming
/// what is missing; under CI (`FENCEPOST_REQUIRE_SHARED_TESTDATA=1`, set by `.ci/run`) it fails
/// instead, so CI cannot pass by skipping.
public enum TestInputs {
    /// Whether a missing input must fail rather than skip.
    public static var required: Bool { ProcessInfo.processInfo.environment["FENCEPOST_REQUIRE_SHARED_TESTDATA"] == "1" }
}
