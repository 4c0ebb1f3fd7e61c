// Zone-set files on disk: built from a GeoJSON file into a temporary file that is fsynced and
// renamed over the old set (AtomicFile), and opened by mapping them read-only (MappedFile).
import FencepostLinux
import Geofencing
import LocalNotifications

/// A zone set mapped from its file: the mapping lives as long as this object.
public final class LoadedZoneSet {
    public let file: MappedFile
    public let set: ZoneSet
    public var path: String { file.path }

    /// Maps and checks the set at `path`; the pages the check read are let go again, so the
    /// process keeps only what its queries touch.
    /// - Parameters:
    ///   - deferStructureCheck: leave the O(zones) check of every reference to
    ///     ``continueCheck(budget:)``, which must return true before the set is used.
    ///   - guarded: hold a read lease on the file (``MappedFile``): the process that maps the set
    ///     for as long as it runs (the agent) must block SIGIO, read it (signalfd) and let go of
    ///     the set when ``MappedFile/isBeingReplaced``.
    /// - Throws: `.file` when it cannot be mapped (or, guarded, another process has it open for
    ///   writing), `.set` when it is damaged, old or too new.
    public init(path: String, verifyChecksum: Bool = true, deferStructureCheck: Bool = false, guarded: Bool = false) throws(ZoneSetOpenError) {
        do { file = try MappedFile(path: path, guarded: guarded) } catch { throw .file(error) }
        let file = self.file
        do {
            set = try ZoneSet(file.bytes, verifyChecksum: verifyChecksum, deferStructureCheck: deferStructureCheck) { offset, length in
                file.dropResidentPages(offset: offset, length: length)
            }
        } catch { throw .set(error) }
        pendingCheck = set.deferredCheck
        if pendingCheck == nil { file.dropResidentPages() }
    }

    /// What remains of a deferred check (nil once it has passed, or when it was not deferred).
    public private(set) var pendingCheck: ZoneSetStructureCheck?

    /// Runs up to `budget` more items of the deferred check; true once all of it has passed.
    /// - Throws: the first damage found (the set must not be used).
    public func continueCheck(budget: Int) throws(ZoneSetError) -> Bool {
        guard var check = pendingCheck else { return true }
        let file = self.file
        let done = try check.advance(budget: budget) { offset, length in file.dropResidentPages(offset: offset, length: length) }
        pendingCheck = done ? nil : check
        if done { file.dropResidentPages() }
        return done
    }
}

/// Why a zone-set file could not be opened.
public enum ZoneSetOpenError: Error, CustomStringConvertible {
    case file(FileError)
    case set(ZoneSetError)

    /// Whether building it again from the GeoJSON is the remedy (missing, damaged or older).
    public var needsRebuild: Bool {
        switch self {
        case .file: true
        case .set(let e): e.needsRebuild
        }
    }

    public var description: String {
        switch self {
        case .file(let e): "\(e)"
        case .set(let e): "\(e)"
        }
    }
}

/// Building zone-set files.
public enum ZoneSetFiles {
    /// Where the agent keeps the set built from its `zones` file: next to the state file.
    public static func setPath(forState statePath: String) -> String { statePath + ".zones" }

    /// Where a build run for a running agent keeps the set it replaces (a hard link), so that the
    /// agent's letting go of its mapping does not free the file's blocks in its loop turn (see
    /// `AtomicFile`); the next such build, or the agent's next start, removes it.
    public static func retainedPath(forSet path: String) -> String { path + ".replaced" }

    /// What a build did.
    public struct Built: Sendable {
        public var zones: Int
        public var bytes: Int
        public var sourceHash: UInt64
        /// Features read (more than `zones` when a repeated id replaced an earlier zone; nil when
        /// not built from GeoJSON here).
        public var features: Int? = nil
    }

    /// Builds the set of the GeoJSON file at `geojsonPath` and writes it atomically to `output`:
    /// either the old file stays (any failure, the disk full included) or the new one is complete.
    ///
    /// - Parameters:
    ///   - name: the GeoJSON's name in messages.
    ///   - idProperty: the property that names a zone (`zones_id_property`, `--id-property`).
    ///   - progress: (features read, bytes read of total) while reading.
    ///   - retainReplaced: a running agent maps `output`: keep the replaced set at
    ///     ``retainedPath(forSet:)`` (and remove the one kept by the previous build).
    /// - Complexity: O(n); the GeoJSON is mapped and its pages are let go as the reader passes them.
    ///   - guarded: read the GeoJSON under a read lease (``MappedFile``): a process that writes or
    ///     truncates it meanwhile waits for the build (at most the kernel's lease-break-time); for a
    ///     build inside the agent, which blocks SIGIO.
    public static func build(geojsonPath: String, name: String? = nil, output: String, limits: RequestLimits,
                             idProperty: String? = nil, retainReplaced: Bool = false, guarded: Bool = false,
                             progress: (Int, Int, Int) -> Void = { _, _, _ in }) throws(ZoneSetBuildError) -> Built {
        let input: MappedFile
        do { input = try MappedFile(path: geojsonPath, guarded: guarded) } catch {
            throw ZoneSetBuildError(.input, "\(name ?? geojsonPath): cannot read: \(error.errno)"
                                    + (error.operation == "F_SETLEASE" ? " (another process has it open for writing)" : ""))
        }
        let total = input.bytes.count
        // The image lives only in this call: it is freed before the read-back below.
        var features = 0
        func compileAndWrite() throws(ZoneSetBuildError) -> Built {
            let image = try ZoneSetCompiler.build(input.bytes, name: name ?? geojsonPath, limits: limits, idProperty: idProperty) { read, offset in
                features = read
                progress(read, offset, total)
                input.dropResidentPages(upTo: offset)
            } release: {
                input.dropResidentPages()
            }
            input.dropResidentPages()
            return try write(image, to: output, retaining: retainReplaced ? retainedPath(forSet: output) : nil)
        }
        var built = try compileAndWrite()
        built.features = features
        // Read back what was written: the agent that swaps it in need not checksum it again.
        do { _ = try LoadedZoneSet(path: output) } catch {
            throw ZoneSetBuildError(.output, "cannot write the zone set: \(output) does not read back: \(error)")
        }
        return built
    }

    /// Whether the set at `output` was built from the GeoJSON at `geojsonPath` under `limits`
    /// and `idProperty` (then a build can be skipped).
    public static func isCurrent(_ output: String, geojsonPath: String, limits: RequestLimits, idProperty: String? = nil) -> Bool {
        guard let loaded = try? LoadedZoneSet(path: output),
              let h = try? sourceHash(geojsonPath: geojsonPath, limits: limits, idProperty: idProperty) else {
            return false
        }
        return loaded.set.sourceHash == h
    }

    /// The exit status of `zones build --if-changed` when the set was current.
    public static let unchangedStatus: Int32 = 3

    /// Writes `image` to `output` atomically (the replaced file kept at `retaining`, if given).
    public static func write(_ image: ZoneSetImage, to output: String, retaining: String? = nil) throws(ZoneSetBuildError) -> Built {
        let file: AtomicFile
        do { file = try AtomicFile(replacing: output, retaining: retaining) } catch { throw ZoneSetBuildError(.output, "cannot write the zone set: \(error)") }
        var sink = FileSink(file: file)
        do {
            try image.write(to: &sink)
            try file.commit()
        } catch {
            file.abandon()
            throw ZoneSetBuildError(.output, "cannot write the zone set: \(error); the previous set (if any) is kept")
        }
        return Built(zones: image.zoneCount, bytes: image.fileSize, sourceHash: image.sourceHash)
    }

    /// The source hash of the GeoJSON file at `path` under `limits` and `idProperty` (it is
    /// mapped and let go of as it is read: the file is never resident at once); `guarded` as for
    /// ``build``.
    public static func sourceHash(geojsonPath path: String, limits: RequestLimits, idProperty: String? = nil, guarded: Bool = false) throws(FileError) -> UInt64 {
        let input = try MappedFile(path: path, guarded: guarded)
        var hasher = ZoneSetFormat.ContentHasher()
        var at = 0
        while at < input.bytes.count {
            let end = min(input.bytes.count, at + ZoneSetFormat.releaseChunk)
            hasher.add(UnsafeRawBufferPointer(rebasing: input.bytes[at ..< end]))
            input.dropResidentPages(offset: at, length: end - at)
            at = end
        }
        return ZoneSetCompiler.sourceHash(contentHash: hasher.finish(), limits: limits, idProperty: idProperty)
    }
}

/// The atomic file as the zone-set writer's sink.
struct FileSink: ZoneSetSink {
    let file: AtomicFile
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) { try file.write(bytes) }
}
