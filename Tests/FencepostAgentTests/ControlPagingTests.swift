import CivilTime
@testable import FencepostAgent
import FencepostJSON
import FencepostLinux
import Foundation
import LocalNotifications
import SeededRandom
import Testing

/// Listings in pages, O(k) removal, the peer policy's groups.
@Suite struct ControlPagingTests {
    static func zone(_ i: Int) -> String {
        #"{"id":"z\#(i)","content":{"title":"Z"},"trigger":{"location":{"region":{"circle":{"lat":\#(51 + Double(i % 1000) / 1e4),"lon":\#(6 + Double(i / 1000) / 1e4),"radius":50}},"notifyOnEntry":true,"repeats":true}}}"#
    }

    /// A harness with `n` zones z0 … z(n−1), added in chunks.
    static func harness(zones n: Int) throws -> ControlHarness {
        let h = try ControlHarness()
        var i = 0
        while i < n {
            let chunk = (i..<min(n, i + 2000)).map(zone).joined(separator: ",")
            _ = try h.result("add", #"{"requests":[\#(chunk)]}"#)
            i += 2000
        }
        return h
    }

    @Test func pendingPagesCoverEverythingOnceInAddOrder() throws {
        let h = try Self.harness(zones: 2_500)
        var seen: [String] = []
        var after: String? = nil
        var pages = 0
        repeat {
            let params = after.map { #"{"limit":700,"after":"\#($0)"}"# } ?? #"{"limit":700}"#
            let page = try h.result("pending", params)
            #expect(page["total"] == 2_500)
            let items = page["pending"]?.array ?? []
            #expect(items.count <= 700 && !items.isEmpty)
            seen += items.compactMap { $0["request"]?["id"]?.string }
            after = page["next"]?.string
            pages += 1
        } while after != nil && pages < 10
        #expect(pages == 4)
        #expect(seen == (0..<2_500).map { "z\($0)" })
        // Unknown `after`, bad `limit`: clear errors.
        let (code, message, _) = try h.error("pending", #"{"limit":5,"after":"nope"}"#)
        #expect(code == -32602 && message.contains("\"nope\" is not pending"), "\(message)")
        #expect(try h.error("pending", #"{"limit":0}"#).1.contains("\"limit\" must be an integer ≥ 1"))
        // status pages its pending list the same way, at most 250 a page (each item costs its
        // "why": the page bounds the loop turn), whatever `limit` asks.
        let s = try h.result("status", #"{"limit":1000}"#)
        #expect(s["pendingTotal"] == 2_500 && s["pending"]?.array?.count == 250 && s["next"] == "z249")
        let s2 = try h.result("status", #"{"after":"z2300","limit":1000}"#)
        #expect(s2["pending"]?.array?.count == 199 && s2["next"] == .null)
        let s3 = try h.result("status", #"{"after":"z2000","limit":100}"#)
        #expect(s3["pending"]?.array?.count == 100 && s3["next"] == "z2100")
    }

    @Test func anUnpagedListingTooLargeForOneAnswerSaysToPage() throws {
        let h = try Self.harness(zones: 5_100)
        let (code, message, _) = try h.error("pending")
        #expect(code == -32000)
        #expect(message.contains("5100 pending requests do not fit in one answer") && message.contains("\"limit\""), "\(message)")
        // status answers with its first page and says where to go on.
        let s = try h.result("status")
        #expect(s["pendingTotal"] == 5_100 && s["pending"]?.array?.count == 250 && s["next"] == "z249")
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func enginePagesAgreeWithTheFullList(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let h = try ControlHarness()
        var engine = ControlHarness.engine()
        for i in 0..<600 {
            let r = try NotificationRequest(json: try JSONValue.parse(Array(Self.zone(rng.int(0...399)).utf8)))
            _ = try engine.add(r, clock: h.clock)
            if i % 7 == 0 { _ = engine.removePending(["z\(rng.int(0...399))"]) }
        }
        let all = engine.pending(clock: h.clock).map { $0.request.identifier }
        #expect(engine.pendingIdentifiers == all, "seed \(seed)")
        let limit = rng.int(1...50)
        var got: [String] = []
        var after: String? = nil
        while true {
            let page = try #require(engine.pendingPage(after: after, limit: limit, clock: h.clock), "seed \(seed)")
            got += page.items.map { $0.request.identifier }
            guard page.hasMore else { break }
            after = page.items.last?.request.identifier
        }
        #expect(got == all, "seed \(seed), limit \(limit)")
    }

    /// Churn: adds, replacements (a replaced request moves to the end) and removals, enough for the
    /// add-order index to compact itself several times; the engine's order must be the model's
    /// (an array kept by hand), whole and page by page, and a page continues after an item that
    /// was removed between two pages (it does not answer "not pending").
    @Test(arguments: [UInt64(4), 5, 6])
    func pagesFollowAddOrderThroughChurn(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let h = try ControlHarness()
        var engine = ControlHarness.engine()
        var model: [String] = []
        func request(_ i: Int) throws -> NotificationRequest {
            try NotificationRequest(json: try JSONValue.parse(Array(Self.zone(i).utf8)))
        }
        for step in 0..<12_000 {
            let i = rng.int(0...2_999)
            if rng.int(0...2) == 0 {
                _ = engine.removePending(["z\(i)"])
                model.removeAll { $0 == "z\(i)" }
            } else {
                _ = try engine.add(request(i), clock: h.clock)
                model.removeAll { $0 == "z\(i)" }
                model.append("z\(i)")
            }
            if step % 3_000 == 2_999 {
                #expect(engine.pendingIdentifiers == model, "seed \(seed), step \(step)")
            }
        }
        // Page through, removing the last item of each page before asking for the next.
        let limit = rng.int(5...60)
        var got: [String] = []
        var after: String? = nil
        var removedBetweenPages = 0
        while true {
            let page = try #require(engine.pendingPage(after: after, limit: limit, clock: h.clock), "seed \(seed): after \(after ?? "-")")
            let ids = page.items.map { $0.request.identifier }
            got += ids
            guard page.hasMore, let last = ids.last else { break }
            _ = engine.removePending([last])
            removedBetweenPages += 1
            after = last
        }
        #expect(got == model, "seed \(seed), limit \(limit)")
        #expect(engine.pendingCount == model.count - removedBetweenPages, "seed \(seed)")
    }

    /// `remove` of a few ids looks them up; it does not list (with next fires) and sort every
    /// pending request, then filter: O(n log n) per call. Removing 50 ids one by one among 50k
    /// zones must cost about what it costs among 500 (each call's commit dominates), not 100×.
    @Test func removingOneOfManyDoesNotDependOnHowManyArePending() throws {
        func removals(_ h: ControlHarness) throws -> Duration {
            let clock = ContinuousClock()
            return try clock.measure {
                for i in 0..<50 {
                    let r = try h.result("remove", #"{"ids":["z\#(i * 7)","ghost","z\#(i * 7)"]}"#)
                    #expect(ids(r["removed"]) == ["z\(i * 7)"])
                }
            }
        }
        let small = try Self.harness(zones: 500), large = try Self.harness(zones: 50_000)
        let a = try removals(small), b = try removals(large)
        #expect(large.center.engine.pendingCount == 49_950)
        #expect(b < a * 5 + .milliseconds(500), "50 removals: \(a) among 500 zones, \(b) among 50,000")
    }

    @Test func supplementaryGroupsCountAndUnreadableOnesFailClosed() throws {
        let policy = ControlPolicy(ownerUserID: 0, groups: [(998, "fencepost")])
        // `adduser pi fencepost`: 998 is a supplementary group of uid 1000.
        let pi = PeerCredentials(processID: 1, userID: 1000, groupID: 1000, groupIDs: [1000, 27, 998])
        #expect(policy.check(pi) == nil)
        let notInGroup = PeerCredentials(processID: 1, userID: 1000, groupID: 1000, groupIDs: [1000, 27])
        #expect(policy.check(notInGroup) == "permission denied: uid 1000 is not root, the owner (uid 0) or in group 998 (fencepost)")
        // Credentials that cannot be read at all: a refusal line, never a silent accept.
        let (message, line) = ControlPolicy.unreadableCredentials(Errno.badFileDescriptor)
        #expect(message.hasPrefix("permission denied"))
        #expect(try JSONValue.parse(line.dropLast())["error"]?["code"] == -32000)
        // The real peer: over a socket, the kernel gives this process's own groups.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fp-peer-\(UUID().uuidString).sock").path
        defer { unlink(path) }
        let listener = try UnixListener(path: path, mode: 0o600)
        let client = try UnixClient.connect(path)
        let peer = try #require(try listener.accept()).peerCredentials()
        #expect(peer.userID == getuid() && peer.groupID == getgid())
        var own = [gid_t](repeating: 0, count: 256)
        let n = Int(getgroups(Int32(own.count), &own))
        #expect(Set(peer.groupIDs) == Set(own.prefix(max(n, 0))), "\(peer.groupIDs) vs getgroups \(own.prefix(max(n, 0)))")
        _ = client
    }
}
