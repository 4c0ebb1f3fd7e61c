/// What a push button means once debounced.
public struct ButtonEvent: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: UInt8, Hashable, Sendable {
        /// Pressed and released before the long-press threshold. Reported at the (debounced) release.
        case shortPress
        /// Held for the long-press threshold. Reported at the threshold, while still held; the release
        /// that follows reports nothing.
        case longPress
    }

    public var kind: Kind
    /// Monotonic nanoseconds at which the event is known.
    public var time: UInt64

    public init(_ kind: Kind, at time: UInt64) {
        self.kind = kind
        self.time = time
    }

    public var description: String { "\(kind == .shortPress ? "short" : "long") press at \(time)" }
}

/// Raw edges of a push button (as the kernel reports them, contacts bouncing) in, presses out.
///
/// A level change takes effect once the raw level has stayed unchanged for `debounce` after its last
/// edge: the change is dated at that last edge, and is known `debounce` later. Edges that return to the
/// debounced level within the window (bounces, spikes) are ignored. A press shorter than `debounce` is
/// treated as a bounce.
///
/// Pure state machine: time is an argument. Feed every edge with ``edge(pressed:at:)`` and call
/// ``advance(to:)`` at ``nextDeadline``. Feed pending edges before advancing past their time; an edge
/// dated before the latest time seen (the caller advanced first) is taken as happening at that time.
/// When the long-press threshold and a release settling fall on the same instant, the long press wins
/// (the debounced level is still pressed at the threshold).
public struct ButtonDebouncer: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// How long the raw level must stay unchanged to count, nanoseconds.
        public var debounce: UInt64
        /// How long a press must last to be a long press, nanoseconds (≥ `debounce`).
        public var longPress: UInt64

        /// Defaults: 30 ms debounce, 1 s long press.
        public init(debounce: UInt64 = 30_000_000, longPress: UInt64 = 1_000_000_000) {
            precondition(longPress >= debounce, "longPress must be ≥ debounce")
            self.debounce = debounce
            self.longPress = longPress
        }
    }

    public private(set) var configuration: Configuration
    /// The debounced level.
    public private(set) var isPressed: Bool
    /// The last raw level reported.
    public private(set) var rawIsPressed: Bool
    /// Time of the last raw edge.
    private var lastEdge: UInt64
    /// When the current debounced press began (its last raw edge); nil when released.
    private var pressedSince: UInt64?
    private var longPressReported = false
    /// The latest time seen.
    public private(set) var now: UInt64
    /// Raw edges that repeated the previous raw level (lost edges or duplicate reports).
    public private(set) var duplicateEdges = 0

    public init(configuration: Configuration = Configuration(), initiallyPressed: Bool = false, at time: UInt64 = 0) {
        self.configuration = configuration
        isPressed = initiallyPressed
        rawIsPressed = initiallyPressed
        lastEdge = time
        now = time
        // A button already held at start is not a press (nothing is reported until it is released and
        // pressed again).
        pressedSince = nil
        longPressReported = initiallyPressed
    }

    /// When ``advance(to:)`` next has something to do: a pending level settling, or the long-press
    /// threshold of the current press.
    ///
    /// - Complexity: O(1).
    public var nextDeadline: UInt64? {
        let settle: UInt64? = rawIsPressed != isPressed ? lastEdge + configuration.debounce : nil
        let long: UInt64? = isPressed && !longPressReported ? pressedSince.map { $0 + configuration.longPress } : nil
        switch (settle, long) {
        case (let s?, let l?): return min(s, l)
        case (let s?, nil): return s
        case (nil, let l?): return l
        case (nil, nil): return nil
        }
    }

    /// Records a raw edge (`pressed`: the new raw level). Events due before `time` are returned first.
    ///
    /// - Complexity: O(1).
    public mutating func edge(pressed: Bool, at time: UInt64) -> [ButtonEvent] {
        let t = max(time, now)
        let events = advance(to: t)
        if pressed == rawIsPressed {
            duplicateEdges += 1
        } else {
            rawIsPressed = pressed
            lastEdge = t
        }
        return events
    }

    /// New timings (a configuration reloaded while running): a level settling and the long-press
    /// threshold of a press under way are measured from their edges with the new values (one that
    /// is then already past is reported by the next ``advance(to:)``, at its time).
    ///
    /// - Complexity: O(1).
    public mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Reports every event due up to and including `time`, in time order.
    ///
    /// - Complexity: O(1) (at most two events are due at once).
    public mutating func advance(to time: UInt64) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        while let due = nextDeadline, due <= time {
            now = max(now, due)
            let long: UInt64? = isPressed && !longPressReported ? pressedSince.map { $0 + configuration.longPress } : nil
            if let l = long, l == due {
                longPressReported = true
                events.append(ButtonEvent(.longPress, at: due))
                continue
            }
            // The raw level has held for `debounce`: it becomes the debounced level.
            isPressed = rawIsPressed
            if isPressed {
                pressedSince = lastEdge
                longPressReported = false
            } else {
                if !longPressReported { events.append(ButtonEvent(.shortPress, at: due)) }
                pressedSince = nil
                longPressReported = false
            }
        }
        now = max(now, time)
        return events
    }
}
