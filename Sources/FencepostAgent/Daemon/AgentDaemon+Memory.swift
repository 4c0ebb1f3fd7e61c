// Giving memory back: after start-up, and once the loop has been idle a while after work (see
// IdleRelease).
import CivilTime
import FencepostLinux
import LocalNotifications

extension AgentDaemon {
    /// Gives memory back after start-up and after work (see ``IdleRelease``): the engine's spare
    /// array room, SQLite's caches, the control read buffer, the heap's free pages, then the
    /// read-only file pages from the page table (last: reading /proc/self/smaps allocates, and
    /// the trim gives that back too). Idle pages come back as minor faults from the page cache.
    /// - Complexity: O(requests) for the engine's copy when it shrinks; one read of smaps.
    @discardableResult
    func releaseMemory() -> Memory.CodePagesReleased {
        let before = center.engine.slotStorage
        center.releaseSpareCapacity()
        let after = center.engine.slotStorage
        log.debug("engine slots: \(before.count) (\(before.free) free) in room for \(before.capacity), now \(after.capacity)")
        center.store.releaseMemory()
        clients.releaseIdleMemory()
        let code = Memory.releaseCodePages()
        Memory.releaseFreePages()
        return code
    }

    /// Releases memory once the loop has been idle ``IdleRelease/quiet`` after its last work.
    func releaseMemoryIfIdle() {
        guard idleRelease.isDue(at: SystemClocks.boottimeNow().nanosecondsSinceBoot) else { return }
        let code = releaseMemory()
        log.debug("idle \(idleRelease.quiet / 1_000_000_000) s after work: heap trimmed, \(code.mappings) read-only file mappings dropped from the page table")
    }
}
