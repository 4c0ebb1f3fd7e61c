@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Glibc
import LocalNotifications
import Testing

/// The delivery hook under steady load: children end and start all the time, the waiting queue
/// never empties, and its storage stays bounded (it kept every delivery ever queued).
@Suite struct DeliveryHookTests {
    static func delivery(_ n: Int) throws -> DeliveredNotification {
        let json = #"{"id":"h\#(n)/1/1","request":"h\#(n)","content":{"title":"Hook"},"outcome":"delivered","signal":{"led":true}}"#
        return try DeliveredNotification(json: JSONValue.parse(json))
    }

    @Test func queueStorageStaysBoundedUnderSteadyLoad() throws {
        var lines: [String] = []
        let hook = DeliveryHook(HookConfiguration(command: ["/bin/true"], timeoutSeconds: 5),
                                log: DaemonLog { _, text in lines.append(text) })
        var n = 0
        var largest = 0
        for turn in 0..<150 {
            // Six deliveries a turn, four children at most: the queue is never drained.
            for _ in 0..<6 { hook.run(try Self.delivery(n), at: UInt64(turn) * 1_000_000); n += 1 }
            usleep(3_000)
            hook.poll(at: UInt64(turn) * 1_000_000)
            largest = max(largest, hook.waitingStorage)
            #expect(hook.counts.waiting <= hook.maximumWaiting)
        }
        #expect(largest <= 2 * hook.maximumWaiting + 6, "the waiting array held \(largest) entries for a queue of at most \(hook.maximumWaiting)")
        // Skips are summarised: one line at once, then held (150 turns within a minute of virtual time).
        #expect(lines.filter { $0.contains("not given to the hook") }.count == 1, "\(lines.filter { $0.contains("not given") })")
        // Reap what is still running.
        for _ in 0..<200 where hook.counts.running > 0 || hook.counts.waiting > 0 {
            usleep(5_000)
            hook.poll(at: 200_000_000)
        }
    }
}
