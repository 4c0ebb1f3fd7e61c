/// Everything that can go wrong while loading time zone rules: a TZif file's bytes, a POSIX TZ
/// rule string, or the file system around them.
///
/// Every case names the zone (identifier, file path or rule text) and the fault, so that a message
/// built from it alone tells the operator what to fix.
public enum ZoneError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data does not start with `TZif`.
    case badMagic(zone: String)
    /// The version byte is not NUL, `2`, `3` or `4`.
    case unsupportedVersion(zone: String, version: UInt8)
    /// The data ends inside `section`; `atByte` is the data's length (where reading stopped).
    case truncated(zone: String, section: TZifSection, atByte: Int)
    /// A header count is impossible (zero types, more than 256 types, zero abbreviation bytes,
    /// indicator counts other than 0 or the type count).
    case countOutOfRange(zone: String, count: TZifCount, value: UInt32)
    /// Transition `transition` names a local time type that does not exist.
    case typeIndexOutOfRange(zone: String, transition: Int, index: Int, typeCount: Int)
    /// Local time type `type` points past the abbreviation characters.
    case abbreviationIndexOutOfRange(zone: String, type: Int, index: Int, characterCount: Int)
    /// Local time type `type` has a UTC offset outside −89999…93599 s (RFC 8536 §3.2: more than
    /// −25 h and less than 26 h).
    case offsetOutOfRange(zone: String, type: Int, seconds: Int)
    /// Transition times are not strictly ascending at `index`.
    case transitionsNotAscending(zone: String, index: Int)
    /// The footer is missing its leading newline or its TZ string does not parse.
    case badFooter(zone: String, footer: String, position: Int, fault: PosixTZFault)
    /// A POSIX TZ rule string (not from a file) does not parse; `position` is a UTF-8 offset.
    case badPosixTZ(text: String, position: Int, fault: PosixTZFault)
    /// No zone of that name exists under `searchedDirectory`.
    case unknownZone(String, searchedDirectory: String)
    /// A zone name that could escape the zone directory (`..`, absolute path, NUL, empty).
    case invalidZoneName(String)
    /// The file exists (or should) but could not be read; `message` is `strerror(errno)`.
    case unreadableFile(path: String, errno: Int32, message: String)

    public var description: String {
        switch self {
        case .badMagic(let z): return "\(z): not a TZif file (bad magic)"
        case .unsupportedVersion(let z, let v): return "\(z): unsupported TZif version byte \(v)"
        case .truncated(let z, let s, let n): return "\(z): truncated at byte \(n) in \(s)"
        case .countOutOfRange(let z, let c, let v): return "\(z): \(c) count \(v) out of range"
        case .typeIndexOutOfRange(let z, let t, let i, let n):
            return "\(z): transition \(t) uses type \(i) of \(n)"
        case .abbreviationIndexOutOfRange(let z, let t, let i, let n):
            return "\(z): type \(t) abbreviation index \(i) beyond \(n) characters"
        case .offsetOutOfRange(let z, let t, let s): return "\(z): type \(t) UTC offset \(s) s out of range"
        case .transitionsNotAscending(let z, let i): return "\(z): transition \(i) is not after transition \(i - 1)"
        case .badFooter(let z, let f, let p, let fault):
            return "\(z): bad footer TZ string \"\(f)\" at \(p): \(fault)"
        case .badPosixTZ(let t, let p, let fault): return "bad TZ rule \"\(t)\" at \(p): \(fault)"
        case .unknownZone(let n, let d): return "unknown time zone \"\(n)\" (searched \(d))"
        case .invalidZoneName(let n): return "invalid time zone name \"\(n)\""
        case .unreadableFile(let p, let e, let m): return "\(p): \(m) (errno \(e))"
        }
    }
}

/// The parts of a TZif file (RFC 8536 §3), named in ``ZoneError/truncated(zone:section:atByte:)``.
public enum TZifSection: String, Sendable, Equatable, CustomStringConvertible {
    case header = "header"
    case version1DataBlock = "version 1 data block"
    case secondHeader = "version 2+ header"
    case transitionTimes = "transition times"
    case transitionTypes = "transition types"
    case localTimeTypes = "local time type records"
    case abbreviations = "time zone designations"
    case leapSeconds = "leap second records"
    case standardWallIndicators = "standard/wall indicators"
    case utLocalIndicators = "UT/local indicators"
    case footer = "footer"

    public var description: String { rawValue }
}

/// The six counts of a TZif header (RFC 8536 §3.1).
public enum TZifCount: String, Sendable, Equatable, CustomStringConvertible {
    case isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
    public var description: String { rawValue }
}

/// Why a POSIX TZ string (POSIX.1-2017 §8.3 with the RFC 8536 §3.3.1 extensions) does not parse.
public enum PosixTZFault: String, Sendable, Equatable, CustomStringConvertible {
    case expectedName = "expected a zone abbreviation"
    case nameTooShort = "abbreviation shorter than 3 characters"
    case unterminatedName = "'<' without '>'"
    case badNameCharacter = "character not allowed in a quoted abbreviation"
    case expectedOffset = "expected an offset [+|-]hh[:mm[:ss]]"
    case valueOutOfRange = "number out of range"
    case expectedRule = "expected a rule date Jn, n or Mm.w.d"
    case expectedComma = "expected ','"
    case trailingCharacters = "unexpected characters after the rule"
    case missingLeadingNewline = "footer does not start with a newline"

    public var description: String { rawValue }
}
