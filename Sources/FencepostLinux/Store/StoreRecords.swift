// The rows of the notification store. The store is model-agnostic: requests, contents and
// categories are opaque JSON text written and read by the notification model's own mapping.

/// A pending request.
public struct StoredRequest: Sendable, Equatable {
    public var id: String
    /// The request as JSON.
    public var json: String
    /// Opaque JSON text of the trigger's progress (last fire etc.).
    public var state: String

    public init(id: String, json: String, state: String) {
        self.id = id
        self.json = json
        self.state = state
    }
}

/// A delivered notification.
public struct StoredDelivery: Sendable, Equatable {
    /// Unique over the store's memory (see ``StoreChange/putDelivery(_:)``), e.g. "water@1767225600".
    public var deliveryID: String
    public var requestID: String
    /// Content and trigger summary as JSON text.
    public var json: String
    /// Wall seconds of the fire it answers (nil for location fires).
    public var scheduledAt: Int64?
    /// Wall seconds, or 0 when the wall clock is untrusted.
    public var deliveredAt: Int64
    /// "delivered" | "late" | "coalesced".
    public var outcome: String
    /// Action identifier once answered ("default", "dismiss", custom).
    public var response: String?
    public var respondedAt: Int64?

    public init(
        deliveryID: String, requestID: String, json: String, scheduledAt: Int64?, deliveredAt: Int64,
        outcome: String, response: String? = nil, respondedAt: Int64? = nil
    ) {
        self.deliveryID = deliveryID
        self.requestID = requestID
        self.json = json
        self.scheduledAt = scheduledAt
        self.deliveredAt = deliveredAt
        self.outcome = outcome
        self.response = response
        self.respondedAt = respondedAt
    }
}

/// A notification category (its actions are inside the JSON).
public struct StoredCategory: Sendable, Equatable {
    public var id: String
    public var json: String

    public init(id: String, json: String) {
        self.id = id
        self.json = json
    }
}

/// One entry of the history of non-delivery outcomes: "missed", "evicted", "coalesced", "skipped" …
public struct StoredOutcome: Sendable, Equatable {
    public var at: Int64
    public var requestID: String
    public var event: String
    public var detail: String

    public init(at: Int64, requestID: String, event: String, detail: String) {
        self.at = at
        self.requestID = requestID
        self.event = event
        self.detail = detail
    }
}

/// Who installed requests by `apply`: the configuration (the file at start and SIGHUP,
/// `fencepost apply`) or the fleet's desired state. Each has its own memory, so that neither
/// removes what the other installed (a board's start applies its file, which does not name the
/// fleet's requests).
public enum ApplyOwner: Sendable, Equatable {
    case configuration, fleet

    /// The table of its memory.
    var table: String { self == .configuration ? "applied_request" : "fleet_applied_request" }
}

/// A request that `apply` installed: its id, a fingerprint of its JSON (opaque to the store),
/// and whose memory it is in.
public struct AppliedRequestRecord: Sendable, Equatable {
    public var id: String
    public var fingerprint: UInt64
    public var owner: ApplyOwner

    public init(id: String, fingerprint: UInt64, owner: ApplyOwner = .configuration) {
        self.id = id
        self.fingerprint = fingerprint
        self.owner = owner
    }
}

/// One change to the store. ``NotificationStore/apply(_:)`` applies a list of them in one
/// transaction.
///
/// The larger rows are boxed (`indirect`), so a list of many small changes (an apply's million
/// `putAppliedRequest`s) costs 56 bytes a change, not 121.
public enum StoreChange: Sendable, Equatable {
    /// Inserts or replaces by id. A new id goes to the end of the add order; a replacement also
    /// moves its id to the end (as a new add does, like Apple's `add` with an existing identifier).
    case putRequest(StoredRequest)
    /// Sets the state of an existing request; an unknown id is ``StoreError/unknownRequest(id:)``.
    case setRequestState(id: String, state: String)
    /// Removes a request; an unknown id is not an error.
    case removeRequest(id: String)
    case removeAllRequests
    /// Inserts a delivery. A delivery id the store has seen before — present, or removed but still
    /// remembered (the newest `removedDeliveryMemory` removals) — is
    /// ``StoreError/duplicateDelivery(deliveryID:)`` and fails the whole batch: the engine relies
    /// on it so that one fire is never delivered twice.
    indirect case putDelivery(StoredDelivery)
    /// Records the answer to a present delivery; an unknown id is ``StoreError/unknownDelivery(deliveryID:)``.
    case setDeliveryResponse(deliveryID: String, response: String, at: Int64)
    /// Removes a delivery from the delivered list (its id stays remembered); unknown ids are not an error.
    case removeDelivery(deliveryID: String)
    case removeAllDeliveries
    /// Replaces all categories, kept in the order given; a repeated id is ``StoreError/duplicateCategory(id:)``.
    case replaceCategories([StoredCategory])
    case setMeta(key: String, value: String)
    /// Removes a meta value; an unknown key is not an error.
    case removeMeta(key: String)
    /// Remembers (or re-remembers, moving it to the end of the install order) a request that
    /// `apply` installed, by its fingerprint.
    case putAppliedRequest(AppliedRequestRecord)
    /// Forgets an applied request in every owner's memory (a request gone from the engine is
    /// gone for both); an unknown id is not an error.
    case removeAppliedRequest(id: String)
    /// Appends to the outcome history, which keeps the newest `outcomeCapacity` rows.
    indirect case appendOutcome(StoredOutcome)
    /// Appends an event to the fleet outbox (its seq is the row id), within the store's
    /// ``NotificationStore/outboxBounds``: when full, rows are dropped by priority and a gap
    /// event says so (NotificationStore+Outbox.swift).
    indirect case appendOutbox(OutboxEntry)
}

/// An event for the fleet outbox, before it has a seq.
public struct OutboxEntry: Sendable, Equatable {
    /// `delivery`, `response`, `transition`, `gap` …
    public var kind: String
    public var topic: String
    /// 0 survives longest (responses, gaps), 3 goes first.
    public var priority: Int
    /// The JSON members after v/id/seq.
    public var body: String
    /// Wall seconds when it was recorded.
    public var created: Int64

    public init(kind: String, topic: String, priority: Int, body: String, created: Int64) {
        self.kind = kind
        self.topic = topic
        self.priority = priority
        self.body = body
        self.created = created
    }
}

/// A row of the outbox.
public struct OutboxRow: Sendable, Equatable {
    public var seq: Int64
    public var kind: String
    public var topic: String
    public var body: String
    /// UTF-8 bytes of `body` (what the bounds count).
    public var bytes: Int
}

/// Everything the agent reloads at start.
public struct StoreSnapshot: Sendable, Equatable {
    /// In add order.
    public var requests: [StoredRequest]
    /// In delivery order (removed deliveries are not listed).
    public var deliveries: [StoredDelivery]
    /// In the order of the last ``StoreChange/replaceCategories(_:)``.
    public var categories: [StoredCategory]
    public var meta: [String: String]

    public init(requests: [StoredRequest], deliveries: [StoredDelivery], categories: [StoredCategory], meta: [String: String]) {
        self.requests = requests
        self.deliveries = deliveries
        self.categories = categories
        self.meta = meta
    }
}
