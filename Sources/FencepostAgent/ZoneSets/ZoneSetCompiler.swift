// GeoJSON → zone set, with the agent's rules: each zone is checked exactly as it was when zones
// were requests (the same request is built and validated, so a refusal names the feature or zone
// with the same words), then added to the set as data.
import FencepostJSON
import Geofencing
import LocalNotifications
import TrackFormats

/// Why a zone set could not be built (the first problem; nothing was written).
public struct ZoneSetBuildError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed: the callers choose exit codes and retries by it, never by the message.
    public enum Kind: Hashable, Sendable {
        /// The GeoJSON could not be read (missing, unreadable, too large).
        case input
        /// The GeoJSON was read, and a feature or the file's structure is refused.
        case content
        /// The set could not be written (disk full, no permission); the old set is kept.
        case output
    }

    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    public var description: String { message }
}

/// Builds zone sets from GeoJSON.
public enum ZoneSetCompiler {
    /// The key of the set built from `geojson` under `limits`: the file's content hash mixed with
    /// the limits that decide which zones are accepted (a changed `[engine] max_radius` rebuilds).
    public static func sourceHash(_ geojson: UnsafeRawBufferPointer, limits: RequestLimits) -> UInt64 {
        sourceHash(contentHash: ZoneSetFormat.contentHash(geojson), limits: limits)
    }

    /// ``sourceHash(_:limits:)`` of a file whose ``ZoneSetFormat/contentHash(_:)`` is `contentHash`.
    public static func sourceHash(contentHash: UInt64, limits: RequestLimits) -> UInt64 {
        var h = contentHash
        for v in [limits.maximumRadius.bitPattern, UInt64(limits.maximumIdentifierLength), UInt64(limits.maximumTitleLength)] {
            h = (h ^ v) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 31
        }
        return h
    }

    /// Reads every feature of `geojson` and builds the set.
    ///
    /// - Parameters:
    ///   - name: the file's name for messages (the config's resolved path).
    ///   - progress: called every 65,536 features with (features read, bytes read), and once
    ///     when every feature is read with the file's size as the offset (then the set is
    ///     indexed); the caller may let go of the input's pages before the offset (they have
    ///     been read and hashed).
    ///   - release: called once the reader has scanned the file's top level (which reads it
    ///     all): the caller may let go of all its pages.
    /// - Throws: the first refusal, worded as the config parser words it:
    ///   `NAME: feature 3 ("depot"): …` or `NAME: zone "depot": …`.
    /// - Complexity: O(n) in the size of the file; memory O(zones), never a tree of the file.
    ///   The source hash is taken as the features are read, not in a pass of its own.
    public static func build(_ geojson: UnsafeRawBufferPointer, name: String, limits: RequestLimits,
                             progress: (Int, Int) -> Void = { _, _ in },
                             release: () -> Void = {}) throws(ZoneSetBuildError) -> ZoneSetImage {
        var builder = ZoneSetBuilder()
        let bytes = geojson.assumingMemoryBound(to: UInt8.self)
        var reader: GeoJSONFeatureReader
        do { reader = try GeoJSONFeatureReader(bytes) } catch { throw ZoneSetBuildError(.content, "\(name): \(error)") }
        release()
        var hasher = ZoneSetFormat.ContentHasher()
        func hash(upTo offset: Int) {
            let end = min(offset, geojson.count)
            guard end > hasher.bytesHashed else { return }
            hasher.add(UnsafeRawBufferPointer(rebasing: geojson[hasher.bytesHashed ..< end]))
        }
        while true {
            let zone: ZoneDefinition?
            do { zone = try reader.next() } catch { throw ZoneSetBuildError(.content, "\(name): \(error)") }
            guard let zone else { break }
            let (region, content) = try entry(for: zone, name: name, limits: limits)
            builder.add(region, content: content)
            if reader.index % 65_536 == 0 {
                hash(upTo: reader.offset)
                progress(reader.index, reader.offset)
            }
        }
        hash(upTo: geojson.count)
        progress(reader.index, geojson.count)   // the last call: the whole file is read
        return builder.finish(sourceHash: sourceHash(contentHash: hasher.finish(), limits: limits))
    }

    /// Checks every zone of `geojson` as ``build(_:name:limits:progress:)`` does, and that none
    /// has one of `requestIDs`; returns the number of zones (distinct ids).
    /// - Complexity: O(n); memory O(distinct ids).
    public static func check(_ geojson: UnsafeRawBufferPointer, name: String, limits: RequestLimits,
                             requestIDs: Set<String>) throws(ZoneSetBuildError) -> Int {
        var reader: GeoJSONFeatureReader
        do { reader = try GeoJSONFeatureReader(geojson.assumingMemoryBound(to: UInt8.self)) } catch { throw ZoneSetBuildError(.content, "\(name): \(error)") }
        var ids: Set<String> = []
        while true {
            let zone: ZoneDefinition?
            do { zone = try reader.next() } catch { throw ZoneSetBuildError(.content, "\(name): \(error)") }
            guard let zone else { break }
            _ = try entry(for: zone, name: name, limits: limits)
            if requestIDs.contains(zone.id) {
                throw ZoneSetBuildError(.content, "\(name): zone \(JSONValue.string(zone.id).serialized()) has the id of a [[request]] of this file")
            }
            ids.insert(zone.id)
        }
        return ids.count
    }

    /// A zone's region and content: the request a zone used to be (title = id, sound "default",
    /// active, repeating), checked by the same rules.
    public static func entry(for zone: ZoneDefinition, name: String, limits: RequestLimits) throws(ZoneSetBuildError) -> (Region, ZoneContent) {
        let request: NotificationRequest
        do {
            request = try AgentConfigurationParser.request(for: zone)
            try request.validate(limits: limits)
        } catch {
            throw ZoneSetBuildError(.content, "\(name): zone \(JSONValue.string(zone.id).serialized()): \(error.message)")
        }
        guard case .location(let t) = request.trigger else { preconditionFailure("a zone is a location request") }
        let region = Region(identifier: zone.id, shape: t.shape, notifyOnEntry: t.notifyOnEntry, notifyOnExit: t.notifyOnExit,
                            dwell: t.dwell, cooldown: t.cooldown, repeats: t.repeats)
        return (region, ZoneContent(title: request.content.title, sound: request.content.sound ?? "default",
                                    level: levelCode(request.content.interruptionLevel)))
    }

    /// The set's code of an interruption level (ZoneContent.level).
    public static func levelCode(_ l: InterruptionLevel) -> UInt8 {
        switch l {
        case .passive: 0
        case .active: 1
        case .timeSensitive: 2
        case .critical: 3
        }
    }

    /// The interruption level of a set's code (unknown codes: active).
    public static func level(_ code: UInt8) -> InterruptionLevel {
        switch code {
        case 0: .passive
        case 2: .timeSensitive
        case 3: .critical
        default: .active
        }
    }
}
