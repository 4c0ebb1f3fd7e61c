// What `apply` remembers of the requests it installed: per request, its id and a fingerprint — a
// 64-bit FNV-1a hash of the request's canonical JSON (the compact text of `NotificationRequest.json`,
// members in the model's fixed order). "Unchanged" is decided by comparing fingerprints.
//
// Why a hash is enough here: when two different requests with the same id had equal
// fingerprints (a 2⁻⁶⁴ chance per edited request), apply would take the edited request as
// unchanged and leave the installed one as it is — a valid request with its progress, exactly the
// state before the file was edited. Nothing is written for it and no other request is touched, so
// a collision can delay an edit (until the request is edited again) but never corrupt the state.
//
// Whose: the configuration's (the file at start and SIGHUP, `fencepost apply`) and the fleet's
// desired documents' are kept apart (ApplyOwner): a board's start applies its file, which does
// not name the fleet's requests, and must not remove them.
//
// Where it is kept: the store's `applied_request` and `fleet_applied_request` tables, read only while
// applying — a million zones would otherwise cost tens of megabytes for the life of the agent.
// Version 1 files kept one meta value, `apply.requests`: a JSON object id → the request's JSON.
// While the table is empty that value is read (each request decoded and fingerprinted as now);
// the first apply that writes replaces it with rows and deletes it, in the same transaction.
import FencepostJSON
import FencepostLinux
import LocalNotifications

/// The memory of the requests `apply` installed: its fingerprints and the version 1 file's
/// form. The rows themselves are read a page at a time (`NotificationStore.appliedRequests(owner:after:limit:)`,
/// by ApplyPlan).
enum AppliedRequests {
    /// The meta key of version 1 files.
    static let legacyMetaKey = "apply.requests"

    /// The configuration's memory as a version 1 file kept it (its meta value, as the center
    /// loaded it), read while the table is empty; nil when there is none (or `owner` is the
    /// fleet's). Read at once: O(n) in the requests remembered — only a version 1 file has it,
    /// and only the configuration's apply reads it, which runs at once anyway (start, SIGHUP, the
    /// socket).
    static func legacy(_ center: DurableNotificationCenter, owner: ApplyOwner) -> [AppliedRequestRecord]? {
        guard owner == .configuration, let text = center.meta[legacyMetaKey] else { return nil }
        var records: [AppliedRequestRecord] = []
        if case .object(let members)? = try? JSONValue.parse(text) {
            records.reserveCapacity(members.count)
            for (id, json) in members {
                // Decoded and re-encoded, so that the text hashed is the one a request hashes to now;
                // one that no longer decodes hashes as stored and so counts as changed.
                let canonical = (try? NotificationRequest(json: json))?.json ?? json
                records.append(AppliedRequestRecord(id: id, fingerprint: fingerprint(of: canonical)))
            }
        }
        return records
    }

    /// FNV-1a (64 bit) of `request.json`'s compact text: stable across runs and builds (Swift's
    /// `Hasher` is seeded per process).
    /// - Complexity: O(size of the request's JSON).
    static func fingerprint(of request: NotificationRequest) -> UInt64 { fingerprint(of: request.json) }

    static func fingerprint(of json: JSONValue) -> UInt64 {
        var bytes: [UInt8] = []
        json.serialize(into: &bytes)
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h &*= 0x0000_0100_0000_01b3
        }
        return h
    }
}
