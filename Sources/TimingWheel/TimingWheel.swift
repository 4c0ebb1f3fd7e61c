// A hierarchical, cascading timing wheel (Varghese & Lauck, "Hashed and Hierarchical Timing
// Wheels", scheme 7), after tokio's `runtime/time/wheel` rather than Linux's `kernel/time/timer.c`.
//
// Time is an argument. The wheel counts ticks in a `UInt64`; the shell chooses what a tick is
// (1 ms for Fencepost's monotonic timers) and rounds every deadline *up* to a whole tick, so that
// rounding can never make a timer early. The wheel itself reads no clock.
//
// Structure
// ---------
// 11 levels of 64 slots. Level L has a granularity of 64^L ticks: its slot s holds the timers
// whose deadline, read in base 64, has digit s at position L and agrees with `now` on every digit
// above L. A timer goes to the level of the highest base-64 digit in which its deadline differs
// from `now` (`level = (63 - clz((now ^ deadline) | 63)) / 6`), so every timer sits in a slot
// that starts after `now`, and the lowest non-empty level always holds the earliest timers.
//
//   level  granularity (ticks)   range (ticks)   granularity at 1 ms   range at 1 ms
//   -----  -------------------   -------------   -------------------   -------------
//     0    1                     2^6             1 ms                  64 ms
//     1    2^6                   2^12            64 ms                 4.1 s
//     2    2^12                  2^18            4.1 s                 4.37 min
//     3    2^18                  2^24            4.37 min              4.66 h
//     4    2^24                  2^30            4.66 h                12.4 days
//     5    2^30                  2^36            12.4 days             2.18 years
//     6    2^36                  2^42            2.18 years            139 years
//     7    2^42                  2^48            139 years             8,920 years
//     8    2^48                  2^54            8,920 years           571,000 years
//     9    2^54                  2^60            571,000 years         36.5 M years
//    10    2^60                  2^64 (16 slots) 36.5 M years          585 M years
//
// Every slot is a list of intrusive doubly-linked FIFO chains through a slab of nodes (one
// contiguous buffer with a free list), so `schedule` and `cancel` are O(1) and allocate nothing
// once the slab has room. A slot holds 8 chains; a timer's chain is picked by a hash of its
// deadline (see "Striped slots" below). A `UInt64` occupancy bitmap per level, plus one word
// saying which levels are non-empty, gives the earliest slot with two `trailingZeroBitCount`s.
//
// Advancing takes the earliest occupied slot while its start is <= the target: level-0 slots hold
// a single deadline and fire whole; a slot of level L > 0 is *cascaded*: `now` moves to the
// slot's start, timers due exactly then fire, the others are re-filed by the same rule and land
// in lower levels. A timer is thus moved at most 10 times in its life, and fires at exactly its
// tick however far out it was set. Timers scheduled at or before `now` wait in a separate "due"
// list and fire at the next advance, before everything in the wheel (whose deadlines are all
// later than `now`).
//
// A bounded advance (`advance(to:limit:)`, an event loop's budget per turn) stops after `limit`
// fires: the rest of the due list stays; the rest of a level-0 slot (one deadline, `now`) moves
// to the due list whole; a cascade is finished, its due timers past the limit appended to the due
// list in chain order. `now` stays at the last slot opened, so the next advance fires the rest
// first, in the order one unbounded advance would have.
//
// A node is 32 bytes for an `Int` payload: deadline, next, prev, generation, payload. A node does
// not record its slot: that is a function of its deadline and `now`.
//
// Trade-offs
// ----------
// - Cascading vs Linux. Since 4.8 Linux does not cascade: a timer stays in the slot it was put
//   in and fires up to 1/8 of its delay late (a 30-day timer: up to ~4 days on a 1000 Hz wheel).
//   Its timers are mostly cancelled timeouts, for which that is right. Ours are reminders that
//   must fire to the tick, and a cascade is a few stores per timer per level: we cascade. The
//   price is latency in bursts: opening a level-3 slot moves every timer due in the next 4.4
//   minutes (at 1 ms). With a million standing timers that is ~130,000 nodes, ~10 ms in one
//   `advance`; with Fencepost's hundreds of timers it is nothing.
// - 11 levels instead of tokio's 6 plus an overflow list. Six levels at 1 ms cover 2.18 years;
//   a "never" deadline (`UInt64.max`) would need an overflow list and the "slot before now" wrap
//   handling that comes with it. Eleven levels cover all of `UInt64`, so every deadline has a
//   home, every occupied slot is ahead of `now` (no rotation when searching the bitmap), and the
//   price is 45 KB of chain ends and a few bitmap words nobody looks at (`levelMask` skips
//   empty levels).
// - Striped slots. A cascade walks linked chains: pointer chasing, one cache miss per node. With
//   a million timers (a 32 MB slab) nearly every node is a miss, and a plain list made
//   schedule+expire cost 850 ns per timer, no faster than a binary heap. With 8 chains per slot
//   walked together (first only following `next`, one step per chain per round, then re-filing
//   the gathered nodes) 8 misses are in flight and the cost fell to ~130 ns mean, ~80 ns median.
//   More chains gained nothing measurable and made small wheels slower (more chain ends to touch).
//   Timers with equal deadlines hash to the same chain, so they keep their order.
// - Exact next deadline. When the earliest timers are on level 0 the bitmaps give the deadline
//   directly. Above level 0 a slot spans many ticks, so the one earliest slot's chains are scanned
//   for their minimum; the answer is cached until a schedule, cancel or advance can move it. The
//   event loop sleeps exactly until it, never waking early "to cascade".
// - Ties fire in schedule order. All pending timers with the same deadline are always in the same
//   chain (same slot for any `now`, same stripe) and chains are FIFO, so order is preserved
//   through cascades. The due list, whose deadlines can come in any order, is merge-sorted
//   (stable, in place) at the next advance, so `schedule` stays O(1) even for past deadlines.
// - Handles are (slab index, generation). A fired or cancelled node's generation is bumped, so a
//   stale handle is refused; after 2^31 reuses of one node a stale handle would alias.

/// A hierarchical, cascading timing wheel: O(1) schedule and cancel by handle, exact next
/// deadline, and expiry that is never early and never late.
///
/// Time is passed in, in ticks; the wheel reads no clock. The shell picks the tick length and
/// rounds deadlines up to a whole tick.
///
///     var wheel = TimingWheel<String>(now: 0)
///     let handle = wheel.schedule(at: 30 * 86_400_000, "vehicle check")   // 30 days at 1 ms
///     wheel.nextDeadline                                                    // 2_592_000_000
///     wheel.advance(to: 2_591_999_999)                                      // []
///     wheel.advance(to: 2_592_000_000)                                      // [(handle, 2592000000, "vehicle check")]
///
/// `TimingWheel` is a value type (copy on write). It is not `Sendable`: reading
/// ``nextDeadline`` memoizes the answer inside the shared storage.
public struct TimingWheel<Payload> {
    @usableFromInline
    var _storage: _WheelStorage<Payload>

    /// Creates an empty wheel whose current time is `now`.
    ///
    /// - Parameters:
    ///   - now: The current time in ticks.
    ///   - capacity: How many timers to make room for up front; beyond it the slab doubles.
    /// - Complexity: O(1) (the slab is reserved, not touched).
    @inlinable
    public init(now: UInt64 = 0, capacity: Int = 0) {
        precondition(capacity >= 0, "TimingWheel capacity must not be negative")
        _storage = _WheelStorage(now: now, capacity: capacity)
        _checkInvariants()
    }

    /// The wheel's current time in ticks: the `now` of the last ``advance(to:)``, or of `init`.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var now: UInt64 { _storage.now }

    /// The number of pending timers.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var count: Int { _storage.count }

    /// Whether no timer is pending.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool { _storage.count == 0 }

    /// How many timers the slab holds before it must grow.
    ///
    /// - Complexity: O(1).
    @inlinable
    public var capacity: Int { _storage.capacity }

    /// Makes room for at least `minimumCapacity` timers, so that scheduling up to that many does
    /// not allocate.
    ///
    /// - Complexity: O(`count`) when the slab moves, else O(1).
    @inlinable
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        _makeUnique()
        if minimumCapacity > _storage.capacity { _storage.grow(to: minimumCapacity) }
        _checkInvariants()
    }

    /// Schedules `payload` to fire at `deadline`.
    ///
    /// A deadline at or before ``now`` is due: it fires at the next ``advance(to:)``, in deadline
    /// order with the other due timers.
    ///
    /// - Returns: A handle for ``cancel(_:)``; it goes stale when the timer fires or is cancelled.
    /// - Complexity: O(1); allocates only when the slab is full (amortized O(1)).
    @inlinable
    @discardableResult
    public mutating func schedule(at deadline: UInt64, _ payload: Payload) -> TimerHandle {
        _makeUnique()
        let handle = _storage.schedule(at: deadline, payload)
        _checkInvariants()
        return handle
    }

    /// Cancels a pending timer.
    ///
    /// - Returns: The timer's payload, or `nil` (and nothing happens) when `handle` names a timer
    ///   that has fired, was cancelled, or is not from this wheel's slab.
    /// - Complexity: O(1).
    @inlinable
    @discardableResult
    public mutating func cancel(_ handle: TimerHandle) -> Payload? {
        guard _storage.isPending(handle) else { return nil }
        _makeUnique()
        let payload = _storage.cancel(handle)
        _checkInvariants()
        return payload
    }

    /// The earliest pending deadline, exactly, or `nil` when the wheel is empty. It may be at or
    /// before ``now`` when timers are due.
    ///
    /// An event loop sleeps until this deadline (rounded to its clock), then calls
    /// ``advance(to:)``.
    ///
    /// - Complexity: O(1) when cached or when the earliest timers are in level 0 (due within 64
    ///   ticks); otherwise O(k) for the k timers in the one slot that holds the earliest deadline
    ///   (or in the due list). The answer is cached until a schedule, cancel or advance can move it.
    @inlinable
    public var nextDeadline: UInt64? { _storage.nextDeadline() }

    /// Moves the wheel's time to `now` and calls `body` with every timer whose deadline is
    /// `<= now`, in deadline order, ties in schedule order. Allocates nothing.
    ///
    /// **Never early:** a timer is passed to `body` only once its deadline is `<= now`. That is
    /// kept here and nowhere else: a slot is opened only when its start `<= now`; a level-0 slot
    /// holds exactly one deadline, its start; from a higher-level slot only the timers whose
    /// deadline equals the slot's start fire, the rest are re-filed lower. **Never late:** every
    /// timer with a deadline `<= now` is in a slot starting `<= now`, or in the due list, and both
    /// are emptied before this returns.
    ///
    /// `body` runs while the wheel is being mutated and cannot touch it; collect the handles and
    /// act on them afterwards.
    ///
    /// - Precondition: `now >= self.now`. Time never runs backwards here: a monotonic clock never
    ///   does, and a wall clock that is set back is the shell's to handle (recompute, reschedule).
    /// - Complexity: O(levels + fired + cascaded), where each timer is cascaded at most 10 times in
    ///   its life; a jump over empty time costs nothing per tick. Sorting due timers scheduled out
    ///   of deadline order adds O(d log d).
    @inlinable
    public mutating func advance(
        to now: UInt64,
        _ body: (_ handle: TimerHandle, _ deadline: UInt64, _ payload: Payload) -> Void
    ) {
        precondition(now >= _storage.now, "TimingWheel.advance(to:): time went backwards")
        _makeUnique()
        _ = _storage.advance(to: now, limit: Int.max, body)
        _checkInvariants()
    }

    /// Fires at most `limit` of the timers due by `now`, as ``advance(to:_:)`` fires them all: in
    /// deadline order, ties in schedule order, never early. The rest stay pending and due, in
    /// that order: the next advance (to `now` or later) fires them first, before any timer due
    /// later. An event loop thus bounds the work of one turn and comes back at once for the rest.
    ///
    /// When timers are left, ``now`` is the deadline of the last slot opened (at most `now`), and
    /// ``nextDeadline`` is at or before `now`. With `limit` 0 nothing fires: the answer says
    /// whether anything is due.
    ///
    /// - Returns: Whether timers due by `now` are left (the limit was reached before they fired).
    /// - Precondition: `now >= self.now`; `limit >= 0`.
    /// - Complexity: O(levels + `limit` + cascaded): the fires are bounded by `limit`; a slot
    ///   opened is cascaded whole (each timer at most 10 times in its life), and the due timers
    ///   it holds past the limit move to the due list, O(1) each (O(1) in all from level 0).
    @inlinable
    @discardableResult
    public mutating func advance(
        to now: UInt64, limit: Int,
        _ body: (_ handle: TimerHandle, _ deadline: UInt64, _ payload: Payload) -> Void
    ) -> Bool {
        precondition(now >= _storage.now, "TimingWheel.advance(to:limit:): time went backwards")
        precondition(limit >= 0, "TimingWheel.advance(to:limit:): a negative limit")
        _makeUnique()
        let more = _storage.advance(to: now, limit: limit, body)
        _checkInvariants()
        return more
    }

    /// Fires at most `limit` of the timers due by `now` (see ``advance(to:limit:_:)``) and
    /// returns them, with whether due timers are left.
    ///
    /// - Precondition: `now >= self.now`; `limit >= 0`.
    /// - Complexity: as ``advance(to:limit:_:)``, plus the returned array.
    @inlinable
    public mutating func advance(
        to now: UInt64, limit: Int
    ) -> (fired: [(handle: TimerHandle, deadline: UInt64, payload: Payload)], more: Bool) {
        var fired: [(handle: TimerHandle, deadline: UInt64, payload: Payload)] = []
        let more = advance(to: now, limit: limit) { handle, deadline, payload in
            fired.append((handle, deadline, payload))
        }
        return (fired, more)
    }

    /// Moves the wheel's time to `now` and returns every timer whose deadline is `<= now`, in
    /// deadline order, ties in schedule order.
    ///
    /// Never early, never late: see ``advance(to:_:)``, which this calls.
    ///
    /// - Precondition: `now >= self.now` (time never runs backwards).
    /// - Complexity: as ``advance(to:_:)``, plus the returned array.
    @inlinable
    @discardableResult
    public mutating func advance(
        to now: UInt64
    ) -> [(handle: TimerHandle, deadline: UInt64, payload: Payload)] {
        var fired: [(handle: TimerHandle, deadline: UInt64, payload: Payload)] = []
        advance(to: now) { handle, deadline, payload in
            fired.append((handle, deadline, payload))
        }
        return fired
    }

    @inlinable
    mutating func _makeUnique() {
        if !isKnownUniquelyReferenced(&_storage) { _storage = _storage.copy() }
    }
}

/// Names one scheduled timer of one ``TimingWheel``: a slab index and the generation that node
/// had when the timer was scheduled, so a handle to a fired or cancelled timer is recognised as
/// stale even after its node is reused.
public struct TimerHandle: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    let index: UInt32
    @usableFromInline
    let generation: UInt32

    @inlinable
    init(index: UInt32, generation: UInt32) {
        self.index = index
        self.generation = generation
    }

    /// `TimerHandle(index#generation)`.
    ///
    /// - Complexity: O(1).
    public var description: String { "TimerHandle(\(index)#\(generation))" }
}
