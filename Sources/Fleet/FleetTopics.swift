// The fleet link's protocol, pure: topics, identities, payload shapes, the desired document, the
// commands, the outbox's drop policy. No I/O, no clock: times are arguments.
//
// Topics, under D = fencepost/v1/dev/<device>/ (the device never subscribes outside D):
//
//   D/status    ↑ retained, QoS 1   {"online":true,"since":…,"agent":…,"bdSeq":n}; the Will
//                                   {"online":false,"bdSeq":n} (Will Delay: a blip does not flap it)
//   D/desired   ↓ retained, QoS 1   versioned desired document (FleetDesiredDocument)
//   D/reported  ↑ retained, QoS 1   the applied version, or why the newest was not applied
//   D/health    ↑ retained, QoS 0   the latest health snapshot (newest wins, never queued)
//   D/evt       ↑ QoS 1             outbox events with id and seq (one topic: MQTT keeps their order)
//   D/cmd       ↓ QoS 1             commands with id and mandatory expiresAt (+ Message Expiry)
//   D/cmd/res   ↑ QoS 1             command results, by id
import CivilTime
import FencepostJSON

/// Why a fleet input was refused: what, and where (a key path in a document).
public struct FleetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code for `reported`/`cmd/res` (`desired.invalid`, `command.expired` …).
    public var code: String
    public var message: String
    public init(_ code: String, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }
}

/// A device id: letters, digits and `-`, 1 to 23 characters (MQTT's guaranteed client-id length;
/// never `+`, `#` or `/`, so it is one topic level and cannot widen an ACL pattern).
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public static let maximumLength = 23

    public init(_ text: String) throws(FleetError) {
        guard !text.isEmpty else { throw FleetError("device.invalid", "the device id is empty") }
        guard text.utf8.count <= Self.maximumLength else {
            throw FleetError("device.invalid", "the device id \"\(text)\" has \(text.utf8.count) characters; at most \(Self.maximumLength)")
        }
        for (i, c) in text.utf8.enumerated() {
            let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D
            guard ok else {
                throw FleetError("device.invalid", "the device id \"\(text)\" has a character that is not a letter, digit or - at position \(i + 1)")
            }
        }
        self.text = text
    }

    public var description: String { text }
}

/// The topics of one device.
public struct FleetTopics: Hashable, Sendable {
    public let device: DeviceID
    public let root: String

    public static let prefix = "fencepost/v1/dev/"

    public init(device: DeviceID) {
        self.device = device
        root = Self.prefix + device.text
    }

    /// The topics of a device, by their part after its root (`status`, `evt`, `cmd/res` …).
    public enum Leaf: String, Hashable, Sendable, CaseIterable {
        case status, desired, reported, health
        case events = "evt"
        case command = "cmd"
        case commandResult = "cmd/res"
    }

    /// The device's topic `leaf`: `fencepost/v1/dev/<device>/<leaf>`.
    public subscript(leaf: Leaf) -> String { root + "/" + leaf.rawValue }

    public var status: String { self[.status] }
    public var desired: String { self[.desired] }
    public var reported: String { self[.reported] }
    public var health: String { self[.health] }
    public var events: String { self[.events] }
    public var command: String { self[.command] }
    public var commandResult: String { self[.commandResult] }

    /// The filter of `leaf` of every device: `fencepost/v1/dev/+/<leaf>`.
    public static func everyDevice(_ leaf: Leaf) -> String { prefix + "+/" + leaf.rawValue }

    /// The device whose topic `leaf` is `topic`, nil when it is no such topic.
    public static func device(of topic: String, _ leaf: Leaf) -> DeviceID? {
        let suffix = "/" + leaf.rawValue
        guard topic.hasPrefix(prefix), topic.hasSuffix(suffix), topic.utf8.count > prefix.utf8.count + suffix.utf8.count else { return nil }
        return try? DeviceID(String(topic.dropFirst(prefix.count).dropLast(suffix.count)))
    }

    /// What the device subscribes to: its desired document, its commands, its own status (a late
    /// Will is answered by publishing `online` again).
    public var subscriptions: [String] { [desired, command, status] }

    /// Which of the device's downlink topics `topic` is.
    public func classify(_ topic: String) -> Downlink? {
        if topic == desired { return .desired }
        if topic == command { return .command }
        if topic == status { return .status }
        return nil
    }

    public enum Downlink: Hashable, Sendable { case desired, command, status }
}

/// An event's id: device, a 16-bit tag chosen once per state file, and the outbox seq —
/// `van-0042.7f3a.000000000123`: unique forever, opaque to consumers (their dedup key).
public enum FleetEventID {
    public static func make(device: DeviceID, tag: UInt16, seq: Int64) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var t: [UInt8] = []
        for shift in stride(from: 12, through: 0, by: -4) { t.append(hex[Int((tag >> UInt16(shift)) & 0xF)]) }
        var digits = String(seq)
        if digits.utf8.count < 12 { digits = String(repeating: "0", count: 12 - digits.utf8.count) + digits }
        return device.text + "." + String(decoding: t, as: UTF8.self) + "." + digits
    }
}
