// The rules a request must follow, and the error that names the one it breaks.
import CivilTime
import Geofencing

/// A request that breaks a rule: which rule, and a sentence for the user that names the field.
public struct RequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rules, by name (stable: the control socket reports them).
    public enum Rule: String, Hashable, Sendable, CaseIterable {
        /// Not a request at all: wrong JSON type, unknown or missing key.
        case malformed
        /// Empty, over-long or with control characters.
        case identifier
        /// An interval ≤ 0.
        case interval
        /// A repeating interval shorter than the minimum (60 s, as on iOS).
        case repeatingInterval
        /// A radius ≤ 0 or beyond the configured maximum.
        case radius
        /// A polygon that is not a simple ring of ≥ 3 distinct vertices.
        case region
        /// A category identifier that is not registered.
        case unknownCategory
        /// Calendar components out of range or contradictory.
        case calendar
        /// A zone name that the device does not know.
        case zone
        /// A calendar match with no future fire (Feb 30, a date in the past).
        case neverFires
        /// A content field over its limit.
        case content
        /// A category list that breaks a rule (empty or repeated identifiers).
        case category
        /// A response to a delivery that does not exist (or was removed).
        case unknownDelivery
        /// A response with an action the delivery's category does not have.
        case unknownAction
        /// A response to a delivery that was already answered.
        case alreadyAnswered
        /// A duration, instant or distance outside its range (``InputRanges``).
        case range
    }

    public var rule: Rule
    public var message: String

    public init(_ rule: Rule, _ message: String) { self.rule = rule; self.message = message }

    /// The error for a value ``InputRanges`` refused (rule `.range` unless given).
    public init(_ e: RangeError, rule: Rule = .range) { self.init(rule, e.description) }
    public var description: String { message }
}

/// Limits a request is checked against; the device's configuration may change them.
public struct RequestLimits: Hashable, Sendable {
    /// UTF-8 bytes of an identifier.
    public var maximumIdentifierLength = 64
    /// Metres.
    public var maximumRadius = 50_000.0
    /// A repeating interval must be at least this long (milliseconds).
    public var minimumRepeatingInterval: Int64 = 60_000
    /// The longest interval (milliseconds): ten years.
    public var maximumInterval: Int64 = 10 * 366 * 86_400_000
    public var maximumTitleLength = 256
    public var maximumBodyLength = 4096
    public var maximumUserInfoEntries = 64

    public init() {}
}

extension NotificationRequest {
    /// Checks every rule that needs no clock, zone or category list. The first broken rule is thrown.
    /// - Complexity: O(size of the request).
    public func validate(limits: RequestLimits) throws(RequestError) {
        try Self.validateIdentifier(identifier, limits: limits)
        if content.title.utf8.count > limits.maximumTitleLength {
            throw RequestError(.content, "content.title is \(content.title.utf8.count) bytes; the limit is \(limits.maximumTitleLength)")
        }
        if content.body.utf8.count > limits.maximumBodyLength {
            throw RequestError(.content, "content.body is \(content.body.utf8.count) bytes; the limit is \(limits.maximumBodyLength)")
        }
        if content.userInfo.count > limits.maximumUserInfoEntries {
            throw RequestError(.content, "content.userInfo has \(content.userInfo.count) entries; the limit is \(limits.maximumUserInfoEntries)")
        }
        switch trigger {
        case .interval(let t):
            if t.milliseconds <= 0 {
                throw RequestError(.interval, "trigger.interval.seconds must be greater than 0, got \(Self.seconds(t.milliseconds))")
            }
            if t.milliseconds > limits.maximumInterval {
                throw RequestError(.interval, "trigger.interval.seconds must be at most \(limits.maximumInterval / 1000), got \(Self.seconds(t.milliseconds))")
            }
            if t.repeats && t.milliseconds < limits.minimumRepeatingInterval {
                throw RequestError(.repeatingInterval,
                    "a repeating interval must be at least \(limits.minimumRepeatingInterval / 1000) s, got \(Self.seconds(t.milliseconds)) s")
            }
        case .calendar(let t):
            if t.recurrence == nil {
                do { try t.match.validate() } catch { throw RequestError(.calendar, "trigger.calendar.match: \(error)") }
            }
        case .location(let t):
            if case .circle(let c) = t.shape {
                do { _ = try InputRanges.radius(c.radius, "trigger.location.region.circle.radius", maximum: limits.maximumRadius) } catch {
                    throw RequestError(error, rule: .radius)
                }
            }
            do throws(RangeError) {
                if let d = t.dwell { _ = try InputRanges.duration(d, "trigger.location.dwell") }
                _ = try InputRanges.duration(t.cooldown, "trigger.location.cooldown")
            } catch { throw RequestError(error) }
        }
        if case .deliverLate(let g) = missedFirePolicy {
            do { _ = try InputRanges.duration(seconds: g, "missed.late") } catch { throw RequestError(error) }
        }
    }

    /// Checks an identifier: 1…limit UTF-8 bytes, no control characters.
    public static func validateIdentifier(_ id: String, limits: RequestLimits) throws(RequestError) {
        if id.isEmpty { throw RequestError(.identifier, "id must not be empty") }
        if id.utf8.count > limits.maximumIdentifierLength {
            throw RequestError(.identifier, "id is \(id.utf8.count) bytes long; the limit is \(limits.maximumIdentifierLength)")
        }
        if id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw RequestError(.identifier, "id must not contain control characters")
        }
    }

    static func seconds(_ ms: Int64) -> String {
        ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
    }

    static func number(_ d: Double) -> String {
        if let i = Int64(exactly: d) { return "\(i)" }
        return "\(d)"
    }
}
