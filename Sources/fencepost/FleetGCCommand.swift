// `fencepost fleet gc [--dry-run]`: removes the retained blobs (manifests and chunks) that no
// board names in its retained desired or reported document. What is in use is decided in
// Fleet/FleetRollout.swift (BlobInventory); here the broker is read and written.
import ArgumentParser
import FencepostJSON
import FencepostLinux
import Fleet

struct FleetGCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Remove the zone-set blobs no board uses from the broker.",
        discussion: """
            Reads every retained blob topic (fencepost/v1/fleet/+/blob/#: manifests and \\
            chunks) and every board's retained desired and reported documents. A blob is in use \\
            when its SHA-256 is named by a board's desired document (zoneSet, a requests blob) \\
            or by its reported one (the zone set in force, or the one it is downloading); a \\
            board still downloading names it in both, so its blob is never removed under it. \\
            Every other blob is removed: an empty retained message on its manifest first (no \\
            board starts fetching it after that), then on each chunk. Prints each blob removed \\
            and the bytes freed; --dry-run prints the same and removes nothing.

            Chunks without a manifest are a push under way (the manifest is published last) or \\
            one that stopped; they are kept and listed unless --incomplete. Run gc when no push \\
            is under way: a blob pushed but not yet named in any desired document looks unused.
            """)

    @Flag(help: "Print what would be removed; remove nothing.")
    var dryRun = false

    @Flag(help: "Also remove unused chunks that have no manifest (a push that stopped).")
    var incomplete = false

    @OptionGroup var connection: FleetConnectionOptions

    func run() throws {
        try runClient("fleet gc") { () throws(ClientFailure) in
            let session = try connection.connect()
            defer { session.close() }
            var inventory = BlobInventory()
            let desired = FleetTopics.everyDevice(.desired), reported = FleetTopics.everyDevice(.reported)
            for filter in [desired, reported, BlobInventory.filter] {
                do { try session.subscribe(filter, qos: 1, timeout: connection.timeoutNanoseconds) } catch {
                    throw ClientFailure(ClientFailure.unavailable, "subscribing to \(filter): \(error)")
                }
            }
            // One message at a time: a zone set's chunks are not all kept in memory.
            let end = OperatorClock.monotonic() + 600_000_000_000
            while let m = session.nextMessage(until: min(end, OperatorClock.monotonic() + FleetRetained.settle)) {
                if inventory.note(topic: m.topic, bytes: m.payload.count) { continue }
                guard !m.payload.isEmpty, let doc = try? JSONValue.parse(m.payload) else { continue }
                if FleetTopics.device(of: m.topic, .desired) != nil { inventory.noteDesired(doc) }
                else if FleetTopics.device(of: m.topic, .reported) != nil { inventory.noteReported(doc) }
            }
            let remove = inventory.unused(incomplete: incomplete)
            var text = ""
            for blob in inventory.used {
                text += "in use: \(blob.fleet) \(blob.sha256) (\(blob.chunks.count) chunks, \(blob.bytes) bytes)\n"
            }
            if !incomplete {
                for blob in inventory.incompleteUnused {
                    text += "kept (no manifest: a push under way, or --incomplete): \(blob.fleet) \(blob.sha256) (\(blob.chunks.count) chunks, \(blob.bytes) bytes)\n"
                }
            }
            try writeStandardOutput(text)
            var freed = 0
            for blob in remove {
                try writeStandardOutput((dryRun ? "would remove" : "removing") + " \(blob.fleet) \(blob.sha256) (\(blob.chunks.count) chunks, \(blob.bytes) bytes)\n")
                if !dryRun {
                    for topic in blob.retainedTopics {
                        do { try session.publish(topic: topic, payload: [], qos: 1, retain: true, timeout: connection.timeoutNanoseconds) } catch {
                            throw ClientFailure(ClientFailure.unavailable, "removing \(topic) (\(freed) bytes freed so far): \(error)")
                        }
                    }
                }
                freed += blob.bytes
            }
            let blobs = "\(remove.count) blob\(remove.count == 1 ? "" : "s")"
            try writeStandardOutput(dryRun ? "dry run: \(blobs) unused, \(freed) bytes would be freed; nothing removed\n"
                                           : "\(blobs) removed, \(freed) bytes freed\n")
        }
    }
}
