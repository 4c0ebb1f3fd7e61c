// A request list from the fleet (a blob of gzip-compressed JSON Lines, FleetBlobRollout.swift),
// read on a thread of its own: gunzipped next to the state file, every line parsed and checked
// into a request (its shape, as the control socket reads one), ids checked unique, and each
// request fingerprinted — everything `apply` needs but the commit, so that the loop turn that applies it
// does no work it could have done elsewhere (the same split as a SIGHUP's, AgentDaemon+Reload.swift).
//
//   line      one request object, the shape of `add`'s and `apply`'s; blank lines are skipped
//   errors    the first bad line, by number: "line 1234: trigger.calendar.match: hour 25 is out of range …"
//   rules     checked by `apply` itself, against the engine (ApplyPlan.check): a broken one is
//             named by its line too (``locate(_:)``)
//   bounds    at most `maximumTextBytes` of JSON Lines (the gunzip stops there), so a list is
//             refused before it can exhaust the board's memory
import FencepostJSON
import FencepostLinux
import Fleet
import LocalNotifications

/// A request list read and checked, ready for `apply`.
public struct FleetRequestList {
    public var requests: [NotificationRequest] = []
    /// `AppliedRequests.fingerprint(of:)` of each request.
    var fingerprints: [UInt64] = []
    /// The line each request is on (1-based), for messages about request i.
    var lines: [Int] = []

    /// The most bytes of JSON Lines a list may have once gunzipped: 64 MiB, about 200,000
    /// requests of a typical size — beyond the engine's caps (`pending_cap` ≤ 100,000).
    public static let maximumTextBytes = 64 << 20

    /// Gunzips `blob` into `scratch` (removed after), then reads it. Runs on a thread: it touches
    /// nothing of the loop's.
    static func read(blob: String, scratch: String, maximumTextBytes: Int = Self.maximumTextBytes) throws(FleetError) -> FleetRequestList {
        defer { BlobFile.remove(scratch) }
        do { _ = try Gzip.decompress(blob, to: scratch, maximumBytes: maximumTextBytes) } catch {
            throw FleetError("requests.invalid", "the request list could not be gunzipped: \(error.message)")
        }
        let text: [UInt8]
        do { text = try FileDescriptor.readFile(scratch, maximumBytes: maximumTextBytes, regularOnly: true) } catch {
            throw FleetError("requests.disk", "\(scratch): \(error)")
        }
        return try parse(text)
    }

    /// Reads JSON Lines `text`: each line a request; the first bad line refuses the whole list,
    /// named by `name` (the line's number → how a message says it).
    public static func parse(_ text: [UInt8], name: (Int) -> String = { "line \($0)" }) throws(FleetError) -> FleetRequestList {
        var list = FleetRequestList()
        var seen: [String: Int] = [:]
        var start = 0, line = 0
        while start < text.count {
            line += 1
            var end = start
            while end < text.count && text[end] != UInt8(ascii: "\n") { end += 1 }
            defer { start = end + 1 }
            let bytes = text[start..<end]
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let value: JSONValue
            do { value = try JSONValue.parse(bytes) } catch {
                throw FleetError("requests.invalid", "\(name(line)): not JSON: \(error)")
            }
            let request: NotificationRequest
            do { request = try NotificationRequest(json: value) } catch {
                throw FleetError("requests.invalid", RPCError.rule(error, at: name(line)).message)
            }
            if let first = seen.updateValue(line, forKey: request.identifier) {
                throw FleetError("requests.invalid", "\(name(line)): id \"\(request.identifier)\" is given twice (first at \(name(first)))")
            }
            list.requests.append(request)
            list.fingerprints.append(AppliedRequests.fingerprint(of: request))
            list.lines.append(line)
        }
        return list
    }

    /// `message` of `apply` with its "requests[i]" (the list's own index) said as the line.
    func locate(_ message: String) -> String {
        guard let e = ConfigurationLines.listElement(message), e.list == "requests", e.index < lines.count else { return message }
        return "line \(lines[e.index]): " + e.rest
    }
}
