// The operator's side of a blob through the broker (Fleet/FleetBlob.swift): a GeoJSON zone set or
// a JSON Lines request list gzipped (zlib), named by its SHA-256 (libcrypto), cut into retained chunks under
// fencepost/v1/fleet/FLEET/blob/SHA/N, then its retained manifest at …/m — the manifest last,
// so a board that sees it finds every chunk. A blob whose manifest the broker holds already is
// not sent again (blobs are shared by the fleet, by hash).
import FencepostJSON
import FencepostLinux
import Fleet
#if canImport(Glibc)
import Glibc
#endif

enum FleetBlobPublisher {
    struct Published {
        var reference: BlobReference
        var manifest: BlobManifest
        var sentChunks: Int
        var summary: String
    }

    /// The folder for the push's temporary files: $TMPDIR, else /tmp.
    static var temporaryFolder: String {
        getenv("TMPDIR").flatMap { String(validatingCString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// Publishes the file `source` as a blob holding `format`; `option` names what the user gave
    /// in messages (`--zones schools.geojson`, `requests of vans.toml`).
    static func publish(_ source: String, format: BlobFormat, option: String, fleet: FleetName, chunkSize: Int, session: MQTTBlockingSession,
                        timeout: UInt64) throws(ClientFailure) -> Published {
        let temporary = temporaryFolder + "/fencepost-push-\(getpid()).\(format.rawValue).gz"
        defer { BlobFile.remove(temporary) }
        let raw: Int
        do { raw = try Gzip.compress(source, to: temporary) } catch {
            throw ClientFailure(ClientFailure.noInput, "\(option): \(error.message)")
        }
        let blob: [UInt8]
        do { blob = try FileDescriptor.readFile(temporary) } catch {
            throw ClientFailure(ClientFailure.noInput, "\(temporary): \(error)")
        }
        guard blob.count <= BlobManifest.maximumSize else {
            throw ClientFailure(ClientFailure.dataError, "\(option): \(blob.count) bytes gzipped; a blob holds at most \(BlobManifest.maximumSize)")
        }
        let manifest: BlobManifest
        do { manifest = try BlobPacking.manifest(of: blob, chunkSize: chunkSize, rawSize: raw) } catch {
            throw ClientFailure(ClientFailure.unavailable, error.message)
        }
        let reference = BlobReference(sha256: manifest.sha256, size: manifest.size, fleet: fleet, format: format)
        let topics = reference.topics
        // Held already? The retained manifest says so.
        do { try session.subscribe(topics.manifest, qos: 1, timeout: timeout) } catch {
            throw ClientFailure(ClientFailure.unavailable, "subscribing to \(topics.manifest): \(error)")
        }
        let held = FleetRetained.settled(session).contains { $0.topic == topics.manifest && (try? BlobManifest(parsing: $0.payload, for: reference)) == manifest }
        var sent = 0
        if !held {
            for n in 0..<manifest.chunks {
                let (offset, length) = manifest.range(of: n)
                do {
                    try session.publish(topic: topics.chunk(n), payload: Array(blob[offset..<offset + length]), qos: 1, retain: true, timeout: timeout)
                } catch {
                    throw ClientFailure(ClientFailure.unavailable, "publishing chunk \(n) of \(manifest.chunks) to \(topics.chunk(n)): \(error)")
                }
                sent += 1
            }
            do { try session.publish(topic: topics.manifest, payload: manifest.payload, qos: 1, retain: true, timeout: timeout) } catch {
                throw ClientFailure(ClientFailure.unavailable, "publishing the manifest to \(topics.manifest): \(error)")
            }
        }
        let summary = "\(format == .geojson ? "zone set" : "request list") (\(option)): \(raw) bytes, \(manifest.size) gzipped, sha256 \(manifest.sha256); "
            + (held ? "the broker holds it already (\(topics.root))" : "\(manifest.chunks) chunks published under \(topics.root)")
        return Published(reference: reference, manifest: manifest, sentChunks: sent, summary: summary)
    }

}
