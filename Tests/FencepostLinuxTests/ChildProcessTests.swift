import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

@Suite("child processes", .processes)
struct ChildProcessTests {
    /// A child inherits nothing but its standard descriptors. The writer of a pipe without
    /// O_CLOEXEC is closed in the parent while a child runs: the reader must see end-of-file at
    /// once, not when the child ends. (A full test run hung for minutes this way: a gpsfake the
    /// suite had spawned held the socket by which Foundation's `Process` sees another test's
    /// daemon end, so that daemon stayed "running" until gpsfake did.)
    @Test("a spawned child holds no descriptor of its parent but 0, 1 and 2")
    func childInheritsOnlyStandardDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        defer { close(reader) }
        #expect(fcntl(writer, F_GETFD) & FD_CLOEXEC == 0, "the test needs an inheritable descriptor")
        let child = try ChildProcess.spawn(["/bin/sleep", "30"], environment: [])
        defer {
            try? child.send(SIGKILL)
            for _ in 0 ..< 200 { if (try? child.reap()) != nil { break }; usleep(10_000) }
        }
        let inherited = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/fd")) ?? []
        #expect(Set(inherited.compactMap(Int32.init)).isSubset(of: [0, 1, 2]), "the child holds \(inherited.sorted())")
        close(writer)
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        var byte: UInt8 = 0
        let n = read(reader, &byte, 1)
        #expect(n == 0, "no end-of-file while the child runs (read gave \(n), errno \(errno)): the child holds the writer")
    }
}
