// The storage behind `TimingWheel`: the slab of nodes, the slot lists, the occupancy bitmaps.
//
// This class is the only reference type and the only unsafe code of the target. Memory it owns:
//
// - `nodes`:    `capacity` nodes; `nodes[0 ..< highWater]` are initialized (live or free), the
//               rest are raw. Free nodes form a singly-linked list through `next` from `freeHead`.
// - `heads`, `tails`: one entry per list: 704 wheel slots (`level * 64 + slot`), then the due list.
//               -1 is "none". Live nodes form doubly-linked FIFO lists through `prev`/`next`.
// - `occupied`: one bitmap per level, bit s set iff slot s of that level is non-empty.
//
// Everything is `@inlinable` so that clients get code specialized for their payload type.

/// One timer, or a free node of the slab.
@usableFromInline
struct _WheelNode<Payload> {
    /// The deadline in ticks.
    @usableFromInline var deadline: UInt64
    /// Next node in the same list (or in the free list), -1 at the end.
    @usableFromInline var next: Int32
    /// Previous node in the same list, -1 at the head. Unused while free.
    @usableFromInline var prev: Int32
    /// Bumped whenever the node is freed, which makes old handles stale.
    @usableFromInline var generation: UInt32
    /// The list the node is in: a wheel slot, `dueList`, or `freeMarker`.
    @usableFromInline var list: UInt16
    /// The payload of a live node; `nil` while free.
    @usableFromInline var payload: Payload?

    @inlinable
    init() {
        deadline = 0
        next = -1
        prev = -1
        generation = 0
        list = _WheelLayout.freeMarker
        payload = nil
    }
}

/// The wheel's fixed geometry.
@usableFromInline
enum _WheelLayout {
    /// Levels: 11 × 6 bits cover all 64 bits of a deadline.
    @inlinable static var levelCount: Int { 11 }
    /// Slots per level, and bits of deadline per level.
    @inlinable static var slotsPerLevel: Int { 64 }
    @inlinable static var bitsPerLevel: Int { 6 }
    /// Lists `0 ..< wheelListCount` are wheel slots.
    @inlinable static var wheelListCount: Int { 704 }
    /// The list of timers scheduled at or before `now`.
    @inlinable static var dueList: Int { 704 }
    @inlinable static var listCount: Int { 705 }
    /// `_WheelNode.list` of a free node.
    @inlinable static var freeMarker: UInt16 { .max }

    /// The level a deadline later than `now` belongs to: that of the highest base-64 digit in
    /// which the two differ.
    @inlinable @inline(__always)
    static func level(now: UInt64, deadline: UInt64) -> Int {
        let significant = 63 &- ((now ^ deadline) | 63).leadingZeroBitCount
        return significant / 6
    }

    /// The list (`level * 64 + slot`) of `deadline` on `level`.
    @inlinable @inline(__always)
    static func list(level: Int, deadline: UInt64) -> Int {
        level &* 64 &+ Int(truncatingIfNeeded: (deadline &>> UInt64(truncatingIfNeeded: level &* 6)) & 63)
    }

    /// The first tick of `slot` on `level`, in the block of that level that contains `now`.
    @inlinable @inline(__always)
    static func slotStart(level: Int, slot: Int, now: UInt64) -> UInt64 {
        let shift = UInt64(truncatingIfNeeded: level &* 6)
        let blockStart = level == 10 ? 0 : now & (UInt64.max &<< (shift &+ 6))
        return blockStart | (UInt64(truncatingIfNeeded: slot) &<< shift)
    }
}

@usableFromInline
final class _WheelStorage<Payload> {
    @usableFromInline typealias Node = _WheelNode<Payload>

    @usableFromInline var nodes: UnsafeMutablePointer<Node>
    @usableFromInline var capacity: Int
    /// Nodes `0 ..< highWater` are initialized.
    @usableFromInline var highWater: Int
    @usableFromInline var freeHead: Int32
    @usableFromInline let heads: UnsafeMutablePointer<Int32>
    @usableFromInline let tails: UnsafeMutablePointer<Int32>
    @usableFromInline let occupied: UnsafeMutablePointer<UInt64>
    /// Bit L set iff `occupied[L] != 0`.
    @usableFromInline var levelMask: UInt64
    @usableFromInline var now: UInt64
    @usableFromInline var count: Int
    /// Whether the due list is in deadline order (it is unless a past deadline was scheduled after
    /// a later one).
    @usableFromInline var dueSorted: Bool
    /// `nextDeadline` memoized; meaningful only while `cacheValid`.
    @usableFromInline var cachedNext: UInt64?
    @usableFromInline var cacheValid: Bool

    @inlinable
    init(now: UInt64, capacity: Int) {
        self.nodes = UnsafeMutablePointer<Node>.allocate(capacity: capacity)
        self.capacity = capacity
        self.highWater = 0
        self.freeHead = -1
        self.heads = .allocate(capacity: _WheelLayout.listCount)
        self.heads.initialize(repeating: -1, count: _WheelLayout.listCount)
        self.tails = .allocate(capacity: _WheelLayout.listCount)
        self.tails.initialize(repeating: -1, count: _WheelLayout.listCount)
        self.occupied = .allocate(capacity: _WheelLayout.levelCount)
        self.occupied.initialize(repeating: 0, count: _WheelLayout.levelCount)
        self.levelMask = 0
        self.now = now
        self.count = 0
        self.dueSorted = true
        self.cachedNext = nil
        self.cacheValid = true
    }

    deinit {
        nodes.deinitialize(count: highWater)
        nodes.deallocate()
        heads.deallocate()
        tails.deallocate()
        occupied.deallocate()
    }

    /// A deep copy, for copy-on-write.
    @inlinable
    func copy() -> _WheelStorage {
        let copy = _WheelStorage(now: now, capacity: capacity)
        copy.nodes.initialize(from: nodes, count: highWater)
        copy.highWater = highWater
        copy.freeHead = freeHead
        copy.heads.update(from: heads, count: _WheelLayout.listCount)
        copy.tails.update(from: tails, count: _WheelLayout.listCount)
        copy.occupied.update(from: occupied, count: _WheelLayout.levelCount)
        copy.levelMask = levelMask
        copy.count = count
        copy.dueSorted = dueSorted
        copy.cachedNext = cachedNext
        copy.cacheValid = cacheValid
        return copy
    }

    /// Moves the slab to a buffer of at least `minimumCapacity` nodes.
    @inlinable
    func grow(to minimumCapacity: Int) {
        precondition(minimumCapacity <= Int(Int32.max), "TimingWheel: more than 2^31 - 1 timers")
        let newCapacity = min(Int(Int32.max), max(minimumCapacity, 16, capacity &* 2))
        let newNodes = UnsafeMutablePointer<Node>.allocate(capacity: newCapacity)
        newNodes.moveInitialize(from: nodes, count: highWater)
        nodes.deallocate()
        nodes = newNodes
        capacity = newCapacity
    }

    /// A node off the free list, or a fresh one; its `generation` is the new handle's.
    @inlinable @inline(__always)
    func allocateNode() -> Int32 {
        if freeHead >= 0 {
            let n = freeHead
            freeHead = nodes[Int(n)].next
            return n
        }
        if highWater == capacity { grow(to: capacity &+ 1) }
        (nodes + highWater).initialize(to: Node())
        highWater &+= 1
        return Int32(truncatingIfNeeded: highWater &- 1)
    }

    /// Returns a node (already unlinked) to the free list and hands back its payload.
    @inlinable @inline(__always)
    func releaseNode(_ n: Int32) -> Payload {
        let node = nodes + Int(n)
        let payload = node.pointee.payload.take()!
        node.pointee.generation &+= 1
        node.pointee.list = _WheelLayout.freeMarker
        node.pointee.next = freeHead
        freeHead = n
        count &-= 1
        return payload
    }

    // MARK: Lists and bitmaps

    @inlinable @inline(__always)
    func markOccupied(_ list: Int) {
        let level = list &>> 6
        occupied[level] |= 1 &<< UInt64(truncatingIfNeeded: list & 63)
        levelMask |= 1 &<< UInt64(truncatingIfNeeded: level)
    }

    @inlinable @inline(__always)
    func markEmpty(_ list: Int) {
        let level = list &>> 6
        occupied[level] &= ~(1 &<< UInt64(truncatingIfNeeded: list & 63))
        if occupied[level] == 0 { levelMask &= ~(1 &<< UInt64(truncatingIfNeeded: level)) }
    }

    /// Appends node `n` to `list`.
    @inlinable @inline(__always)
    func append(_ n: Int32, to list: Int) {
        let tail = tails[list]
        let node = nodes + Int(n)
        node.pointee.prev = tail
        node.pointee.next = -1
        node.pointee.list = UInt16(truncatingIfNeeded: list)
        if tail < 0 {
            heads[list] = n
            if list < _WheelLayout.wheelListCount { markOccupied(list) }
        } else {
            nodes[Int(tail)].next = n
        }
        tails[list] = n
    }

    /// Removes node `n` from the list it is in.
    @inlinable @inline(__always)
    func unlink(_ n: Int32) {
        let node = nodes + Int(n)
        let list = Int(node.pointee.list)
        let prev = node.pointee.prev
        let next = node.pointee.next
        if prev < 0 { heads[list] = next } else { nodes[Int(prev)].next = next }
        if next < 0 { tails[list] = prev } else { nodes[Int(next)].prev = prev }
        if prev < 0 && next < 0 {
            if list < _WheelLayout.wheelListCount { markEmpty(list) } else { dueSorted = true }
        }
    }

    /// Files node `n` (deadline > `now`) in its wheel slot, or (deadline <= `now`) in the due list.
    @inlinable @inline(__always)
    func file(_ n: Int32, deadline: UInt64) {
        if deadline > now {
            let level = _WheelLayout.level(now: now, deadline: deadline)
            append(n, to: _WheelLayout.list(level: level, deadline: deadline))
        } else {
            let tail = tails[_WheelLayout.dueList]
            if tail >= 0 && nodes[Int(tail)].deadline > deadline { dueSorted = false }
            append(n, to: _WheelLayout.dueList)
        }
    }

    // MARK: Operations

    @inlinable
    func schedule(at deadline: UInt64, _ payload: Payload) -> TimerHandle {
        let n = allocateNode()
        let node = nodes + Int(n)
        node.pointee.deadline = deadline
        node.pointee.payload = payload
        file(n, deadline: deadline)
        count &+= 1
        if cacheValid {
            if let cached = cachedNext, cached <= deadline {} else { cachedNext = deadline }
        }
        return TimerHandle(index: UInt32(truncatingIfNeeded: n), generation: node.pointee.generation)
    }

    @inlinable @inline(__always)
    func isPending(_ handle: TimerHandle) -> Bool {
        let i = Int(handle.index)
        return i < highWater && nodes[i].generation == handle.generation
            && nodes[i].list != _WheelLayout.freeMarker
    }

    /// Cancels the timer `handle` names; it must be pending (`isPending(handle)`).
    @inlinable
    func cancel(_ handle: TimerHandle) -> Payload {
        let n = Int32(truncatingIfNeeded: handle.index)
        unlink(n)
        if cacheValid && cachedNext == nodes[Int(n)].deadline { cacheValid = false }
        return releaseNode(n)
    }

    @inlinable
    func nextDeadline() -> UInt64? {
        if cacheValid { return cachedNext }
        let next = computeNextDeadline()
        cachedNext = next
        cacheValid = true
        return next
    }

    /// The earliest deadline, from the bitmaps plus at most one list scan.
    @inlinable
    func computeNextDeadline() -> UInt64? {
        let due = heads[_WheelLayout.dueList]
        if due >= 0 {
            // Due deadlines are all <= now < every wheel deadline.
            return dueSorted ? nodes[Int(due)].deadline : minimumDeadline(from: due)
        }
        if levelMask == 0 { return nil }
        let level = levelMask.trailingZeroBitCount
        let slot = occupied[level].trailingZeroBitCount
        if level == 0 { return _WheelLayout.slotStart(level: 0, slot: slot, now: now) }
        return minimumDeadline(from: heads[level &* 64 &+ slot])
    }

    @inlinable
    func minimumDeadline(from head: Int32) -> UInt64 {
        var n = head
        var minimum = UInt64.max
        while n >= 0 {
            minimum = min(minimum, nodes[Int(n)].deadline)
            n = nodes[Int(n)].next
        }
        return minimum
    }

    /// Frees node `n` (unlinked) and passes it to `body`.
    @inlinable @inline(__always)
    func fire(_ n: Int32, _ body: (TimerHandle, UInt64, Payload) -> Void) {
        let node = nodes + Int(n)
        let deadline = node.pointee.deadline
        let handle = TimerHandle(index: UInt32(truncatingIfNeeded: n), generation: node.pointee.generation)
        body(handle, deadline, releaseNode(n))
    }

    /// See `TimingWheel.advance(to:_:)`, which documents the never-early guarantee kept here.
    @inlinable
    func advance(to target: UInt64, _ body: (TimerHandle, UInt64, Payload) -> Void) {
        var changed = false
        if heads[_WheelLayout.dueList] >= 0 {
            changed = true
            fireDueList(body)
        }
        while levelMask != 0 {
            let level = levelMask.trailingZeroBitCount
            let slot = occupied[level].trailingZeroBitCount
            let start = _WheelLayout.slotStart(level: level, slot: slot, now: now)
            // Never early: a slot is opened only once its first tick has come.
            if start > target { break }
            changed = true
            now = start
            let list = level &* 64 &+ slot
            var n = heads[list]
            heads[list] = -1
            tails[list] = -1
            markEmpty(list)
            if level == 0 {
                // A level-0 slot holds the single deadline `start`.
                while n >= 0 {
                    let next = nodes[Int(n)].next
                    fire(n, body)
                    n = next
                }
            } else {
                // Cascade: due now, or re-filed in a lower level (now == start < deadline).
                while n >= 0 {
                    let next = nodes[Int(n)].next
                    let deadline = nodes[Int(n)].deadline
                    if deadline == start {
                        fire(n, body)
                    } else {
                        append(n, to: _WheelLayout.list(
                            level: _WheelLayout.level(now: start, deadline: deadline), deadline: deadline))
                    }
                    n = next
                }
            }
        }
        now = target
        if changed { cacheValid = false }
    }

    /// Fires the due list in deadline order, ties in schedule order.
    @inlinable
    func fireDueList(_ body: (TimerHandle, UInt64, Payload) -> Void) {
        if !dueSorted { sortDueList() }
        var n = heads[_WheelLayout.dueList]
        heads[_WheelLayout.dueList] = -1
        tails[_WheelLayout.dueList] = -1
        dueSorted = true
        while n >= 0 {
            let next = nodes[Int(n)].next
            fire(n, body)
            n = next
        }
    }

    /// Sorts the due list by deadline in place: a stable bottom-up merge sort of the linked list
    /// (S. Tatham's), O(d log d) time, no allocation.
    @inlinable
    func sortDueList() {
        var list = heads[_WheelLayout.dueList]
        var runLength = 1
        while true {
            var p = list
            list = -1
            var tail: Int32 = -1
            var merges = 0
            while p >= 0 {
                merges &+= 1
                var q = p
                var pSize = 0
                while pSize < runLength && q >= 0 {
                    pSize &+= 1
                    q = nodes[Int(q)].next
                }
                var qSize = runLength
                while pSize > 0 || (qSize > 0 && q >= 0) {
                    let e: Int32
                    if pSize == 0 || (pSize > 0 && qSize > 0 && q >= 0
                        && nodes[Int(q)].deadline < nodes[Int(p)].deadline)
                    {
                        e = q
                        q = nodes[Int(q)].next
                        qSize &-= 1
                    } else {
                        e = p
                        p = nodes[Int(p)].next
                        pSize &-= 1
                    }
                    if tail >= 0 { nodes[Int(tail)].next = e } else { list = e }
                    nodes[Int(e)].prev = tail
                    tail = e
                }
                p = q
            }
            nodes[Int(tail)].next = -1
            if merges <= 1 {
                heads[_WheelLayout.dueList] = list
                tails[_WheelLayout.dueList] = tail
                dueSorted = true
                return
            }
            runLength &*= 2
        }
    }
}
