import Foundation
import Testing
@testable import FencepostLinux

/// The markers of a guarded state file: the one beside the state directory speaks of its own
/// file only.
@Suite struct StateFileGuardTests {
    /// A second state file in a directory where a first one kept state starts fresh (the marker
    /// beside the directory was named for the directory only, and refused it); the first one's
    /// directory removed and made again empty is still refused.
    @Test func theOuterMarkerIsAboutItsOwnFile() throws {
        let folder = try TempFolder()
        let dir = folder.path("state")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let first = dir + "/a.db"
        do {
            let store = try NotificationStore(path: first, guardState: true)
            try store.apply([StoreChange.putRequest(Sample.request("r1"))])
        }
        #expect(folder.exists(".state.a.db.fencepost-state"))
        // Another file in the same directory: a fresh start, not "a previous run kept its state".
        _ = try NotificationStore(path: dir + "/b.db", guardState: true)
        // The whole directory gone and made again: the marker beside it still tells.
        try FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(throws: StoreError.self) { _ = try NotificationStore(path: first, guardState: true) }
    }
}
