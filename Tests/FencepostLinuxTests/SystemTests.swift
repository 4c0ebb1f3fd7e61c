import CivilTime
import FencepostLinux
import Foundation
import Testing

@Suite("system basics")
struct SystemTests {
    @Test("Errno says the C library's sentence and the C name")
    func errnoText() {
        #expect(Errno.noEntry.description == "No such file or directory")
        #expect(Errno.noEntry.name == "ENOENT")
        #expect(Errno.noEntry.debugDescription == "ENOENT: No such file or directory")
        #expect(Errno.canceled.name == "ECANCELED")
        #expect(Errno(rawValue: 4095).name == nil)
        #expect(Errno(rawValue: 4095).debugDescription.hasPrefix("errno 4095: "))
    }

    @Test("open of a missing file throws ENOENT; a written file reads back whole")
    func fileRoundTrip() throws {
        #expect(throws: Errno.noEntry) { try FileDescriptor.openForReading("/nonexistent/fencepost-\(UUID().uuidString)") }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-fd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }   // a dozen read chunks
        let w = try FileDescriptor.createForWriting(path)
        try bytes.withUnsafeBytes { try w.writeAll($0) }
        try w.close()
        let r = try FileDescriptor.openForReading(path)
        defer { try? r.close() }
        #expect(try r.readToEnd() == bytes)
        #expect(throws: Errno.isDirectory) { try FileDescriptor.openForReading("/").readToEnd() }
    }

    @Test("the boot-time clock never goes back; the wall clock agrees with Foundation")
    func clocks() {
        var last = SystemClocks.boottimeNow()
        for _ in 0..<1000 {
            let now = SystemClocks.boottimeNow()
            #expect(now >= last)
            last = now
        }
        let foundation = Int64(Date().timeIntervalSince1970)
        let ours = SystemClocks.wallNow().secondsSinceEpoch
        #expect(abs(ours - foundation) <= 5)
    }
}
