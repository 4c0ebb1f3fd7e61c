// What goes into the engine (clock readings, configuration) and what comes out of it (deliveries,
// outcomes, state changes for the store).
import CivilTime
import Geofencing

/// One reading of the device's clocks, taken by the shell.
public struct EngineClock: Hashable, Sendable {
    /// Wall-clock time (CLOCK_REALTIME).
    public var wall: WallInstant
    /// Whether the shell trusts `wall` (NTP synchronised, an RTC known good, or GNSS time agreed).
    /// The engine also distrusts any wall time before ``EngineConfiguration/minimumTrustedWall``.
    public var wallTrusted: Bool
    /// Monotonic time that counts suspend (CLOCK_BOOTTIME).
    public var monotonic: MonotonicInstant

    public init(wall: WallInstant, wallTrusted: Bool, monotonic: MonotonicInstant) {
        self.wall = wall; self.wallTrusted = wallTrusted; self.monotonic = monotonic
    }

    var monotonicMilliseconds: UInt64 { monotonic.nanosecondsSinceBoot / 1_000_000 }
    var monotonicSeconds: Double { Double(monotonic.nanosecondsSinceBoot) / 1e9 }
}

/// The engine's settings (from the device's config file).
public struct EngineConfiguration: Hashable, Sendable {
    public var limits = RequestLimits()
    /// Pending calendar and interval requests kept (64 as on iOS); beyond it the latest-firing
    /// ones are evicted, each reported. A repeating request counts once.
    public var pendingCap = 64
    /// Pending location requests kept (the spatial index makes iOS's 20 unnecessary).
    public var locationCap = 100_000
    /// A fire handled at most this many seconds after its time counts as on time; later, it was
    /// missed and its request's ``MissedFirePolicy`` applies.
    public var onTimeTolerance: Int64 = 60
    /// Delivered notifications kept; beyond it the oldest are removed (answered ones first), each
    /// reported as a `pruned` outcome.
    public var deliveredCap = 1000
    /// Wall times before this are never trusted (a board without RTC boots in 1970).
    public var minimumTrustedWall = WallInstant(secondsSinceEpoch: 1_704_067_200)   // 2024-01-01
    /// A wall reading that differs from the last one plus elapsed monotonic time by more than this
    /// is a clock step (seconds).
    public var stepThreshold: Int64 = 2
    /// Most timer fires (calendar and interval together) one engine call handles (at least 1).
    /// Past it the rest stay due, ``NotificationEngine/hasDeferredFires`` says so, and the shell
    /// calls again at once, in its next loop turn, after the other ready work: a loop held off
    /// the CPU for seconds catches up in slices instead of one long turn. Sizing: a fire costs
    /// the agent about 1 ms of CPU in a debug build on a 2-core x86 host (engine, SQLite rows,
    /// outbox, outputs), ~3 ms on a Pi-class core; 8 keep a turn's fires near 25 ms there, under
    /// the 50 ms a turn may take with the socket, GPS and fleet work beside them. A thousand
    /// fires due at once take 125 turns.
    public var firesPerTurn = 8
    public var alertSettings = AlertSettings()
    public var monitor = MonitorConfiguration()

    public init() {}
}

/// A request's progress through its trigger: what the store keeps beside the request so that a
/// restart neither repeats nor loses a fire.
public struct TriggerProgress: Hashable, Sendable {
    /// Distinguishes the lives of one identifier (a replaced request starts a new generation), so
    /// delivery identifiers never repeat.
    public var generation: Int64
    /// Fires handled so far (delivered, missed or coalesced).
    public var fires: Int64 = 0
    /// Calendar: the wall time after which the next fire is searched (the add time, then the last
    /// fire handled). nil while the clock has never been trusted since the add.
    public var after: Int64?
    /// Interval: wall time of the start (nil when the wall clock was untrusted at the start).
    public var anchorWall: Int64?
    /// Location: the last state the monitor confirmed (inside/outside), for a restart.
    public var regionState: RegionState = .unknown

    public init(generation: Int64) { self.generation = generation }
}

/// How a delivered notification came about.
public enum DeliveryOutcome: Hashable, Sendable {
    case onTime
    /// Missed, delivered later within the grace window.
    case late
    /// Stands for `count` missed fires.
    case coalesced(count: Int64)

    public var name: String {
        switch self {
        case .onTime: "delivered"
        case .late: "late"
        case .coalesced: "coalesced"
        }
    }
}

/// A delivered notification (Apple's `UNNotification`).
public struct DeliveredNotification: Hashable, Sendable {
    /// Unique for all time on this device: `request/generation/fire`.
    public var identifier: String
    public var requestIdentifier: String
    public var content: NotificationContent
    /// The fire's time (calendar: its wall time; interval: the wall time when the interval ended,
    /// if known); nil for location events.
    public var scheduled: WallInstant?
    /// When it was delivered (nil when the wall clock was untrusted).
    public var date: WallInstant?
    public var outcome: DeliveryOutcome
    /// For a location trigger: "enter", "exit" or "dwell".
    public var regionEvent: String?
    public var signal: DeliverySignal
    /// The action that answered it, once answered.
    public var response: String?
    public var respondedAt: WallInstant?

    public var isAcknowledged: Bool { response != nil }
}

/// Something that happened to a request other than a delivery; never silent.
public struct Outcome: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// Fires not delivered (policy skip, or older than the grace window).
        case missed
        /// Dropped by the pending cap.
        case evicted
        /// The position was lost while inside the request's region.
        case positionUnknown
        /// Delivered notifications dropped by the delivered cap.
        case pruned
        /// Calendar fires handled while the wall clock was ahead, which come again after it went back.
        case repeated
    }
    public var kind: Kind
    public var requestIdentifier: String
    /// When it was decided (nil while the wall clock is untrusted).
    public var date: WallInstant?
    /// How many fires it concerns.
    public var count: Int64
    /// The first and last fire times concerned, when known.
    public var firstFire: WallInstant?
    public var lastFire: WallInstant?
    /// A sentence for logs and `status`.
    public var detail: String
}

/// A change the shell writes to durable state, in order, in one transaction, before it acts on the
/// deliveries of the same output (so that a crash can lose a buzz but never repeat a fire).
///
/// The large payloads are boxed (`indirect`): an apply of a million zones holds two million changes
/// at once, 424 bytes each with the request inline, ~70 boxed.
public enum StateChange: Hashable, Sendable {
    indirect case putRequest(NotificationRequest, TriggerProgress)
    case setProgress(requestIdentifier: String, TriggerProgress)
    case removeRequest(String)
    case removeAllRequests
    indirect case putDelivery(DeliveredNotification)
    case setResponse(deliveryIdentifier: String, action: String, at: WallInstant?)
    case removeDelivery(String)
    case removeAllDeliveries
    case setCategories([NotificationCategory])
    case setNextGeneration(Int64)
    indirect case outcome(Outcome)
    /// The state of one zone of the zone set (only zones whose state is not the default have one).
    indirect case putZoneState(ZoneState)
    /// The zone's state is the default again (or its zone is gone or was edited).
    case removeZoneState(String)
}

/// What one engine step produced.
public struct EngineOutput: Sendable {
    /// New deliveries, in fire order: signal them after persisting ``changes``.
    public var deliveries: [DeliveredNotification] = []
    /// Non-delivery outcomes (also in ``changes``).
    public var outcomes: [Outcome] = []
    /// Delivery identifiers answered or removed: stop their signals.
    public var acknowledged: [String] = []
    /// Durable state changes, in order.
    public var changes: [StateChange] = []
    /// Entries and exits of zones that ask for them to be reported (also in ``changes`` as the
    /// zone's state): for the fleet link, recorded in the same commit.
    public var transitions: [ZoneTransition] = []

    public init() {}

    public var isEmpty: Bool { deliveries.isEmpty && outcomes.isEmpty && acknowledged.isEmpty && changes.isEmpty && transitions.isEmpty }

    public mutating func append(_ other: EngineOutput) {
        deliveries += other.deliveries; outcomes += other.outcomes
        acknowledged += other.acknowledged; changes += other.changes
        transitions += other.transitions
    }
}

/// An entry into or exit from a zone whose `report` is on.
public struct ZoneTransition: Hashable, Sendable {
    public var zone: String
    /// `enter` or `exit`.
    public var event: String
    /// When the monitor decided it (wall time of the fix that crossed).
    public var date: WallInstant
    /// Where: the fix that decided it.
    public var latitude: Double?
    public var longitude: Double?
    /// The fix's estimated horizontal error, metres.
    public var accuracy: Double?

    public init(zone: String, event: String, date: WallInstant, latitude: Double? = nil, longitude: Double? = nil, accuracy: Double? = nil) {
        self.zone = zone; self.event = event; self.date = date
        self.latitude = latitude; self.longitude = longitude; self.accuracy = accuracy
    }
}

/// A pending request as `pending` and `status` show it.
public struct PendingNotification: Hashable, Sendable {
    public var request: NotificationRequest
    /// Calendar: the next fire (computed even while the clock is untrusted, from the last known
    /// progress). Interval: the wall time the interval ends, estimated from the current reading.
    public var nextFire: WallInstant?
    /// Location: the region's state.
    public var regionState: RegionState?
    /// Why it has not fired yet, when there is more to say than the next fire date.
    public var waitingFor: String?
}
