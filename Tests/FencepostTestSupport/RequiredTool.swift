import Foundation
import Testing

/// A program from Debian that some tests run (`board/install-deps` installs it). Missing on a
/// developer's machine, such a test is skipped with a message naming the package; under `.ci/run`
/// (FENCEPOST_REQUIRE_SHARED_TESTDATA=1) a missing program is a failure, so CI cannot pass by
/// skipping.
public enum RequiredTool {
    /// The path of `name` in the usual folders (or `name` itself when it is a path), or nil after
    /// the message or the recorded issue.
    public static func find(_ name: String, package: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let places = name.hasPrefix("/") ? [name] : ["/usr/bin/\(name)", "/bin/\(name)", "/usr/sbin/\(name)", "/usr/local/bin/\(name)"]
        let found = places.first { FileManager.default.isExecutableFile(atPath: $0) }
        if found == nil {
            let message = "\(name) is not installed (board/install-deps installs \(package))"
            if TestInputs.required {
                Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            } else {
                print("\(message): skipped")
            }
        }
        return found
    }
}
