// GeoJSON → zone set, with the agent's rules: each zone is checked exactly as it was when zones
// were requests (the same request is built and validated, so a refusal names the feature or zone
// with the same words), then added to the set as data.
import FencepostJSON
import Geofencing
import LocalNotifications
import TrackFormats

/// Why a zone set could not be built (nothing was written): every bad feature of the GeoJSON (up
/// to ``ZoneFileError/reportLimit``, then a count), one a line, or what else failed.
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
    /// One line per problem (a log writes each as its own line).
    public var lines: [String]
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.lines = [message] }
    public init(_ kind: Kind, lines: [String]) { self.kind = kind; self.lines = lines }
    /// The lines, one per line.
    public var message: String { lines.joined(separator: "\n") }
    public var description: String { message }

    /// The problems of a zones file, each line prefixed with the file's name.
    init(_ error: ZoneFileError, name: String) {
        self.init(.content, lines: error.lines.map { "\(name): \($0)" })
    }
}

/// Builds zone sets from GeoJSON.
public enum ZoneSetCompiler {
    /// The key of the set built from `geojson` under `limits` with `idProperty`: the file's
    /// content hash mixed with what decides which zones are accepted and what they are called (a
    /// changed `[engine] max_radius` or `zones_id_property` rebuilds).
    public static func sourceHash(_ geojson: UnsafeRawBufferPointer, limits: RequestLimits, idProperty: String? = nil) -> UInt64 {
        sourceHash(contentHash: ZoneSetFormat.contentHash(geojson), limits: limits, idProperty: idProperty)
    }

    /// ``sourceHash(_:limits:idProperty:)`` of a file whose ``ZoneSetFormat/contentHash(_:)`` is `contentHash`.
    public static func sourceHash(contentHash: UInt64, limits: RequestLimits, idProperty: String? = nil) -> UInt64 {
        var h = contentHash
        var mixed = [limits.maximumRadius.bitPattern, UInt64(limits.maximumIdentifierLength), UInt64(limits.maximumTitleLength)]
        if let idProperty {
            // The name's FNV-1a, so that no name hashes as "none".
            mixed.append(ZoneSetFormat.idHash(idProperty.utf8))
        }
        for v in mixed {
            h = (h ^ v) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 31
        }
        return h
    }

    /// Reads every feature of `geojson` and builds the set.
    ///
    /// - Parameters:
    ///   - name: the file's name for messages (the config's resolved path).
    ///   - idProperty: the property that names a zone (`zones_id_property`, `--id-property`).
    ///   - progress: called every 65,536 features with (features read, bytes read), and once
    ///     when every feature is read with the file's size as the offset (then the set is
    ///     indexed); the caller may let go of the input's pages before the offset (they have
    ///     been read and hashed).
    ///   - release: called once the reader has scanned the file's top level (which reads it
    ///     all): the caller may let go of all its pages.
    /// - Throws: every bad feature, one a line, worded as the config parser words it:
    ///   `NAME: feature 3 ("depot"): …` (up to ``ZoneFileError/reportLimit``, then a count).
    /// - Complexity: O(n) in the size of the file; memory O(zones), never a tree of the file.
    ///   The source hash is taken as the features are read, not in a pass of its own.
    public static func build(_ geojson: UnsafeRawBufferPointer, name: String, limits: RequestLimits, idProperty: String? = nil,
                             progress: (Int, Int) -> Void = { _, _ in },
                             release: () -> Void = {}) throws(ZoneSetBuildError) -> ZoneSetImage {
        var builder = ZoneSetBuilder()
        let bytes = geojson.assumingMemoryBound(to: UInt8.self)
        var reader: GeoJSONFeatureReader
        do { reader = try GeoJSONFeatureReader(bytes, idProperty: idProperty) } catch { throw ZoneSetBuildError(error, name: name) }
        release()
        var hasher = ZoneSetFormat.ContentHasher()
        func hash(upTo offset: Int) {
            let end = min(offset, geojson.count)
            guard end > hasher.bytesHashed else { return }
            hasher.add(UnsafeRawBufferPointer(rebasing: geojson[hasher.bytesHashed ..< end]))
        }
        var problems = ZoneFileError()
        while let zone = reader.next(collecting: &problems) {
            do {
                let (region, content) = try entry(for: zone, limits: limits)
                if problems.isEmpty { builder.add(region, content: content) }   // else only checked
            } catch {
                problems.append(ZoneFileProblem(featureIndex: reader.index - 1, featureID: zone.id, message: error.message))
            }
            if reader.index % 65_536 == 0 {
                hash(upTo: reader.offset)
                progress(reader.index, reader.offset)
            }
        }
        guard problems.isEmpty else { throw ZoneSetBuildError(problems, name: name) }
        hash(upTo: geojson.count)
        progress(reader.index, geojson.count)   // the last call: the whole file is read
        return builder.finish(sourceHash: sourceHash(contentHash: hasher.finish(), limits: limits, idProperty: idProperty))
    }

    /// Checks every zone of `geojson` as ``build(_:name:limits:idProperty:progress:release:)``
    /// does, and that none has one of `requestIDs`; returns the number of zones (distinct ids).
    /// - Complexity: O(n); memory O(distinct ids).
    public static func check(_ geojson: UnsafeRawBufferPointer, name: String, limits: RequestLimits, idProperty: String? = nil,
                             requestIDs: Set<String>) throws(ZoneSetBuildError) -> Int {
        var reader: GeoJSONFeatureReader
        do { reader = try GeoJSONFeatureReader(geojson.assumingMemoryBound(to: UInt8.self), idProperty: idProperty) } catch {
            throw ZoneSetBuildError(error, name: name)
        }
        var ids: Set<String> = []
        var problems = ZoneFileError()
        while let zone = reader.next(collecting: &problems) {
            let k = reader.index - 1
            do { _ = try entry(for: zone, limits: limits) } catch {
                problems.append(ZoneFileProblem(featureIndex: k, featureID: zone.id, message: error.message))
                continue
            }
            if requestIDs.contains(zone.id) {
                problems.append(ZoneFileProblem(featureIndex: k, featureID: zone.id, message: "zone \(JSONValue.string(zone.id).serialized()) has the id of a [[request]] of this file"))
            }
            ids.insert(zone.id)
        }
        guard problems.isEmpty else { throw ZoneSetBuildError(problems, name: name) }
        return ids.count
    }

    /// A zone's region and content: the request a zone stands for (title = id, sound "default",
    /// active, repeating), checked by the same rules.
    /// - Throws: the request's rule that the zone breaks.
    public static func entry(for zone: ZoneDefinition, limits: RequestLimits) throws(RequestError) -> (Region, ZoneContent) {
        let request = try AgentConfigurationParser.request(for: zone)
        try request.validate(limits: limits)
        guard case .location(let t) = request.trigger else { preconditionFailure("a zone is a location request") }
        let region = Region(identifier: zone.id, shape: t.shape, notifyOnEntry: t.notifyOnEntry, notifyOnExit: t.notifyOnExit,
                            dwell: t.dwell, cooldown: t.cooldown, repeats: t.repeats)
        return (region, ZoneContent(title: request.content.title, sound: request.content.sound ?? "default",
                                    level: levelCode(request.content.interruptionLevel), report: zone.report))
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
