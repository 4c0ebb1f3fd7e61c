#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif
import CivilTime
#if !hasFeature(Embedded)
import Synchronization   // Embedded: FencepostLinux/System/EmbeddedMutex.swift
#endif

/// The system's time zones: TZif files under a zone directory (design §2), and the device zone
/// chosen by `TZ` or `/etc/localtime` with glibc's rules.
///
/// Loaded rules are cached by path and identifier; a cached entry is used only while the file's
/// device, inode, size and modification time are unchanged, so a replaced file (a tzdata upgrade,
/// a new `/etc/localtime` link) is noticed on the next call.
public struct SystemZones: Sendable {
    /// The zone directory: the initializer's argument, else `$TZDIR`, else `/usr/share/zoneinfo`.
    public let directory: String
    private let cache = ZoneCache()

    /// - Parameter directory: where zone files live; `nil` means `$TZDIR` when set and not empty,
    ///   else `/usr/share/zoneinfo`.
    public init(directory: String? = nil) {
        var d = directory
        if d == nil, let env = getenv("TZDIR"), env.pointee != 0 { d = String(cString: env) }
        var dir = d ?? "/usr/share/zoneinfo"
        while dir.count > 1 && dir.hasSuffix("/") { dir.removeLast() }
        self.directory = dir
    }

    /// The value of the `TZ` environment variable, `nil` when unset.
    ///
    /// - Complexity: O(length).
    public static func environmentTZ() -> String? {
        getenv("TZ").map { String(cString: $0) }
    }

    /// The rules of the zone `name` (an IANA identifier such as `Europe/Berlin`), read from
    /// `directory/name`.
    ///
    /// - Throws: ``ZoneError/invalidZoneName(_:)`` for an empty or absolute name, one with a `..`
    ///   component or a NUL; ``ZoneError/unknownZone(_:searchedDirectory:)`` when no such file
    ///   exists (or it is a directory); ``ZoneError/unreadableFile(path:errno:message:)`` for
    ///   other I/O errors; the parse errors of ``ZoneRules/init(tzif:identifier:)``.
    /// - Complexity: a `stat` when cached; else reading and parsing the file (~50 µs).
    public func rules(named name: String) throws(ZoneError) -> ZoneRules {
        guard Self.isValidName(name) else { throw ZoneError.invalidZoneName(name) }
        do throws(ZoneError) {
            return try load(path: directory + "/" + name, identifier: name)
        } catch .unreadableFile(_, let code, _) where code == ENOENT || code == ENOTDIR || code == EISDIR {
            throw ZoneError.unknownZone(name, searchedDirectory: directory)
        }
    }

    /// The rules in the TZif file at `path` (absolute or relative to the working directory).
    ///
    /// - Parameter identifier: the zone's name; by default the part of `path` after its last
    ///   `zoneinfo/`, else the path itself.
    /// - Throws: ``ZoneError/unreadableFile(path:errno:message:)``, or the parse errors.
    /// - Complexity: as ``rules(named:)``.
    public func rules(atPath path: String, identifier: String? = nil) throws(ZoneError) -> ZoneRules {
        try load(path: path, identifier: identifier ?? Self.identifier(fromPath: path) ?? path)
    }

    /// The device's zone, chosen as glibc chooses it from the `TZ` environment variable:
    ///
    /// - unset (`nil`): the file `localtimePath`, named after its symlink target's part after
    ///   `zoneinfo/` (else "localtime"); UTC when that file does not exist;
    /// - empty, or `:` alone: UTC;
    /// - `:/path` or `/path`: that file;
    /// - `:Name` or `Name`: the file `directory/Name`; when there is none and the value parses as
    ///   a POSIX TZ rule (`EST5EDT,M3.2.0,M11.1.0`), that rule.
    ///
    /// - Parameters:
    ///   - tzVariable: the value of `TZ` (``environmentTZ()`` reads it).
    ///   - localtimePath: the system default, a parameter so that tests can point it elsewhere.
    /// - Throws: ``ZoneError/unknownZone(_:searchedDirectory:)`` for a name that is neither a file
    ///   nor a rule; errors of reading or parsing the file.
    /// - Complexity: a `readlink` and a `stat` when cached, else one file read and parse, or one
    ///   rule parse (~100 µs).
    public func deviceZone(tzVariable: String?, localtimePath: String = "/etc/localtime") throws(ZoneError) -> ZoneRules {
        guard var tz = tzVariable else {
            let id: String
            if case .success(let target) = ZoneFileSystem._readLink(path: localtimePath) {
                id = Self.identifier(fromPath: target) ?? "localtime"
            } else {
                id = "localtime"
            }
            do throws(ZoneError) {
                return try load(path: localtimePath, identifier: id)
            } catch .unreadableFile(_, let code, _) where code == ENOENT {
                return .utc
            }
        }
        if tz.hasPrefix(":") { tz.removeFirst() }
        if tz.isEmpty { return .utc }
        if tz.hasPrefix("/") { return try rules(atPath: tz) }
        var notFound = ZoneError.invalidZoneName(tz)
        if Self.isValidName(tz) {
            do throws(ZoneError) {
                return try rules(named: tz)
            } catch .unknownZone(let n, let d) {
                notFound = .unknownZone(n, searchedDirectory: d)
            }
        }
        if let rule = try? ZoneRules(posixTZ: tz) { return rule }
        throw notFound
    }

    /// Every zone name under `directory` whose file is a TZif file, sorted.
    ///
    /// Skips `posix/`, `right/` (unless `includingVariantTrees`), `posixrules` and `localtime`;
    /// includes `Factory` (glibc loads it). Symbolic links are followed, except into a directory
    /// that is an ancestor of the link (a loop).
    ///
    /// - Complexity: one `stat` and one 4-byte read per file.
    public func allZoneNames(includingVariantTrees: Bool = false) -> [String] {
        var names: [String] = []
        var ancestors: [FileIdentity] = []
        func walk(_ path: String, _ prefix: String) {
            guard case .success(let entries) = ZoneFileSystem._listDirectory(path: path) else { return }
            for entry in entries {
                if prefix.isEmpty {
                    if ["posixrules", "localtime"].contains(entry.name) { continue }
                    if !includingVariantTrees && (entry.name == "posix" || entry.name == "right") { continue }
                }
                let full = path + "/" + entry.name
                switch entry.kind {
                case .directory:
                    guard let id = entry.identity, !ancestors.contains(where: { $0.device == id.device && $0.inode == id.inode }) else { continue }
                    ancestors.append(id)
                    walk(full, prefix + entry.name + "/")
                    ancestors.removeLast()
                case .regularFile:
                    if Self.hasTZifMagic(path: full) { names.append(prefix + entry.name) }
                case .other:
                    continue
                }
            }
        }
        if case .success(let root) = ZoneFileSystem._identity(path: directory) { ancestors.append(root) }
        walk(directory, "")
        return names
    }

    // MARK: Internals

    private func load(path: String, identifier: String) throws(ZoneError) -> ZoneRules {
        let key = path + "\u{0}" + identifier
        if case .success(let id) = ZoneFileSystem._identity(path: path), let hit = cache.lookup(key, id) {
            return hit
        }
        switch ZoneFileSystem._readFile(path: path) {
        case .success(let file):
            let rules = try ZoneRules(tzif: file.bytes, identifier: identifier)
            cache.store(key, file.identity, rules)
            return rules
        case .failure(let e):
            throw ZoneError.unreadableFile(path: path, errno: e.rawValue, message: e.description)
        }
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/") && !name.utf8.contains(0)
            && !name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
    }

    /// The part of a path after its last `zoneinfo/`, if any.
    static func identifier(fromPath path: String) -> String? {
        let bytes = Array(path.utf8), marker = Array("zoneinfo/".utf8)
        var start = bytes.count - marker.count
        while start >= 0 {   // the last occurrence (String.ranges(of:) is not in Embedded Swift)
            if bytes[start..<start + marker.count].elementsEqual(marker) {
                let id = String(decoding: bytes[(start + marker.count)...], as: UTF8.self)
                return id.isEmpty ? nil : id
            }
            start -= 1
        }
        return nil
    }

    static func hasTZifMagic(path: String) -> Bool {
        guard case .success(let head) = ZoneFileSystem._readPrefix(path: path, count: 4) else { return false }
        return head == [0x54, 0x5A, 0x69, 0x66]   // "TZif"
    }
}

/// Loaded rules by path and identifier, valid while the file's identity is unchanged.
final class ZoneCache: Sendable {
    private let entries = Mutex<[String: (identity: FileIdentity, rules: ZoneRules)]>([:])

    func lookup(_ key: String, _ identity: FileIdentity) -> ZoneRules? {
        entries.withLock { e in
            guard let hit = e[key], hit.identity == identity else { return nil }
            return hit.rules
        }
    }

    func store(_ key: String, _ identity: FileIdentity, _ rules: ZoneRules) {
        entries.withLock { $0[key] = (identity, rules) }
    }
}
