// The storage behind `TimingWheel`: the slab of nodes, the slot lists, the occupancy bitmaps.
//
// Size: all of the target's unsafe code, in one class by design (unsafe pointer work lives
// inside one type, and every operation needs the private layout described below).
//
// This class is the only reference type and the only unsafe code of the target. Memory it owns,
// all through `let` pointers (a class's stored `var` costs a dynamic exclusivity check on every
// access, which tripled the cost of `schedule` + `cancel`):
//
// - `header`:      the scalar state (`now`, `count`, free-list head, the slab pointer, …).
// - `nodes`:       the slab, `capacity` nodes of `_WheelNodeLayout<Payload>.stride` bytes, the
//                  first `highWater` in use. A node is a `_WheelLink` (deadline, next, prev,
//                  generation) followed by the payload, which is initialized exactly while the
//                  node is live (odd generation). Free nodes form a singly-linked list through
//                  `next` from `freeHead`. Keeping the payload in the node matters: firing reads
//                  it, and a separate payload array was one more cache miss per timer at 1M.
// - `heads`, `tails`, `chainMasks`: lists are the 704 wheel slots (`level * 64 + slot`), then the
//   due list; each list is 8 chains (`list * 8 + stripe`, the stripe a hash of the deadline).
//   Live nodes form doubly-linked FIFO chains through `prev`/`next`, -1 ending them. A chain's
//   head and tail mean something only while its bit in its list's mask is set. A node does not
//   record its chain: it is a function of its deadline and `now` (the central invariant).
// - `occupied`:    one bitmap per level, bit s set iff slot s of that level is non-empty.
//
// Everything is `@inlinable` so that clients get code specialized for their payload type.

/// The fixed part of a slab node; the payload follows it in the same node (see `_WheelNodeLayout`).
@usableFromInline
struct _WheelLink {
    /// The deadline in ticks.
    @usableFromInline var deadline: UInt64
    /// Next node in the same chain (or in the free list), -1 at the end.
    @usableFromInline var next: Int32
    /// Previous node in the same chain, -1 at the head. Unused while free.
    @usableFromInline var prev: Int32
    /// Odd while the node is live; bumped at allocation and at release, so that a handle
    /// (index, generation) of a fired or cancelled timer no longer matches.
    @usableFromInline var generation: UInt32

    @inlinable
    init() {
        deadline = 0
        next = -1
        prev = -1
        generation = 0
    }
}

/// Where things are in a slab node: a `_WheelLink`, then the payload, initialized exactly while
/// the node is live. One node is one stretch of memory (32 bytes for an `Int` payload), so firing
/// a timer touches the cache line its last cascade already brought in.
@usableFromInline
enum _WheelNodeLayout<Payload> {
    @inlinable static var payloadOffset: Int {
        let alignment = MemoryLayout<Payload>.alignment
        return (MemoryLayout<_WheelLink>.size &+ alignment &- 1) & ~(alignment &- 1)
    }
    @inlinable static var alignment: Int { max(MemoryLayout<_WheelLink>.alignment, MemoryLayout<Payload>.alignment) }
    @inlinable static var stride: Int {
        (payloadOffset &+ MemoryLayout<Payload>.size &+ alignment &- 1) & ~(alignment &- 1)
    }
}

/// The wheel's fixed geometry.
@usableFromInline
enum _WheelLayout {
    /// Levels: 11 × 6 bits cover all 64 bits of a deadline.
    @inlinable static var levelCount: Int { 11 }
    /// Lists `0 ..< wheelListCount` are wheel slots, `level * 64 + slot`.
    @inlinable static var wheelListCount: Int { 704 }
    /// The list of timers scheduled at or before `now`.
    @inlinable static var dueList: Int { 704 }
    @inlinable static var listCount: Int { 705 }

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

    /// Chains per list. A slot's timers are striped over 8 FIFO chains by a hash of their
    /// deadline, so a cascade walks 8 independent chains (several cache misses in flight rather
    /// than one) while timers with equal deadlines still share one chain and keep their order.
    @inlinable static var stripes: Int { 8 }
    /// One bit per chain of a list.
    @usableFromInline typealias ChainMask = UInt8
    /// Chains `list * stripes + stripe`; the due list uses one chain only.
    @inlinable static var chainCount: Int { listCount &* stripes }
    @inlinable static var dueChain: Int { dueList &* stripes }

    /// The chain of a deadline within its list: the top bits of a multiplicative hash, so that
    /// deadlines in any pattern (all on whole seconds, say) spread evenly.
    @inlinable @inline(__always)
    static func stripe(deadline: UInt64) -> Int {
        Int(truncatingIfNeeded: (deadline &* 0x9E37_79B9_7F4A_7C15) &>> UInt64(64 &- stripes.trailingZeroBitCount))
    }

    /// The chain a pending timer is in: its wheel slot's stripe given `now`, or the due chain.
    @inlinable @inline(__always)
    static func chain(now: UInt64, deadline: UInt64) -> Int {
        deadline > now
            ? list(level: level(now: now, deadline: deadline), deadline: deadline) &* stripes &+ stripe(deadline: deadline)
            : dueChain
    }

    /// The first tick of `slot` on `level`, in the block of that level that contains `now`.
    @inlinable @inline(__always)
    static func slotStart(level: Int, slot: Int, now: UInt64) -> UInt64 {
        let shift = UInt64(truncatingIfNeeded: level &* 6)
        let blockStart = level == 10 ? 0 : now & (UInt64.max &<< (shift &+ 6))
        return blockStart | (UInt64(truncatingIfNeeded: slot) &<< shift)
    }
}

/// The scalar state of `_WheelStorage`, kept in memory the storage allocates.
@usableFromInline
struct _WheelHeader<Payload> {
    @usableFromInline var nodes: UnsafeMutableRawPointer
    @usableFromInline var capacity: Int
    @usableFromInline var highWater: Int
    @usableFromInline var freeHead: Int32
    @usableFromInline var levelMask: UInt64
    @usableFromInline var now: UInt64
    @usableFromInline var count: Int
    @usableFromInline var dueSorted: Bool
    @usableFromInline var cacheValid: Bool
    @usableFromInline var cachedNext: UInt64?

    @inlinable
    init(capacity: Int, now: UInt64) {
        self.nodes = .allocate(
            byteCount: capacity &* _WheelNodeLayout<Payload>.stride, alignment: _WheelNodeLayout<Payload>.alignment)
        self.capacity = capacity
        self.highWater = 0
        self.freeHead = -1
        self.levelMask = 0
        self.now = now
        self.count = 0
        self.dueSorted = true
        self.cacheValid = true
        self.cachedNext = nil
    }
}

@usableFromInline
final class _WheelStorage<Payload> {
    @usableFromInline let header: UnsafeMutablePointer<_WheelHeader<Payload>>
    /// Head and tail of each chain; meaningful only while the chain's bit in `chainMasks` is set.
    @usableFromInline let heads: UnsafeMutablePointer<Int32>
    @usableFromInline let tails: UnsafeMutablePointer<Int32>
    /// Per list, bit s set iff chain s of the list is non-empty.
    @usableFromInline let chainMasks: UnsafeMutablePointer<_WheelLayout.ChainMask>
    @usableFromInline let occupied: UnsafeMutablePointer<UInt64>

    /// The slab: `capacity` nodes of `_WheelNodeLayout<Payload>.stride` bytes.
    @inlinable var nodes: UnsafeMutableRawPointer { @inline(__always) get { header.pointee.nodes } }

    /// The link of node `n`.
    @inlinable @inline(__always)
    func link(_ n: Int32) -> UnsafeMutablePointer<_WheelLink> { link(Int(n)) }

    @inlinable @inline(__always)
    func link(_ n: Int) -> UnsafeMutablePointer<_WheelLink> {
        (nodes + n &* _WheelNodeLayout<Payload>.stride).assumingMemoryBound(to: _WheelLink.self)
    }

    /// The payload of node `n`; initialized exactly while the node is live.
    @inlinable @inline(__always)
    func payload(_ n: Int) -> UnsafeMutablePointer<Payload> {
        (nodes + n &* _WheelNodeLayout<Payload>.stride + _WheelNodeLayout<Payload>.payloadOffset)
            .assumingMemoryBound(to: Payload.self)
    }
    @inlinable var capacity: Int { @inline(__always) get { header.pointee.capacity } }
    /// Slab entries `0 ..< highWater` have been used.
    @inlinable var highWater: Int { @inline(__always) get { header.pointee.highWater } }
    @inlinable var freeHead: Int32 {
        @inline(__always) get { header.pointee.freeHead }
        @inline(__always) set { header.pointee.freeHead = newValue }
    }
    /// Bit L set iff `occupied[L] != 0`.
    @inlinable var levelMask: UInt64 {
        @inline(__always) get { header.pointee.levelMask }
        @inline(__always) set { header.pointee.levelMask = newValue }
    }
    @inlinable var now: UInt64 {
        @inline(__always) get { header.pointee.now }
        @inline(__always) set { header.pointee.now = newValue }
    }
    @inlinable var count: Int {
        @inline(__always) get { header.pointee.count }
        @inline(__always) set { header.pointee.count = newValue }
    }
    /// Whether the due list is in deadline order (it is unless a past deadline was scheduled after
    /// a later one).
    @inlinable var dueSorted: Bool {
        @inline(__always) get { header.pointee.dueSorted }
        @inline(__always) set { header.pointee.dueSorted = newValue }
    }
    /// `nextDeadline` memoized; meaningful only while `cacheValid`.
    @inlinable var cachedNext: UInt64? {
        @inline(__always) get { header.pointee.cachedNext }
        @inline(__always) set { header.pointee.cachedNext = newValue }
    }
    @inlinable var cacheValid: Bool {
        @inline(__always) get { header.pointee.cacheValid }
        @inline(__always) set { header.pointee.cacheValid = newValue }
    }

    @inlinable
    init(now: UInt64, capacity: Int) {
        self.header = .allocate(capacity: 1)
        self.header.initialize(to: _WheelHeader(capacity: capacity, now: now))
        self.heads = .allocate(capacity: _WheelLayout.chainCount)
        self.heads.initialize(repeating: -1, count: _WheelLayout.chainCount)
        self.tails = .allocate(capacity: _WheelLayout.chainCount)
        self.tails.initialize(repeating: -1, count: _WheelLayout.chainCount)
        self.chainMasks = .allocate(capacity: _WheelLayout.listCount)
        self.chainMasks.initialize(repeating: 0, count: _WheelLayout.listCount)
        self.occupied = .allocate(capacity: _WheelLayout.levelCount)
        self.occupied.initialize(repeating: 0, count: _WheelLayout.levelCount)
    }

    deinit {
        if !_isPOD(Payload.self) {
            for n in 0 ..< highWater where isLive(n) { payload(n).deinitialize(count: 1) }
        }
        nodes.deallocate()
        header.deinitialize(count: 1)
        header.deallocate()
        heads.deallocate()
        tails.deallocate()
        chainMasks.deallocate()
        occupied.deallocate()
    }

    @inlinable @inline(__always)
    func isLive(_ n: Int) -> Bool { link(n).pointee.generation & 1 == 1 }

    /// A deep copy, for copy-on-write.
    @inlinable
    func copy() -> _WheelStorage {
        let copy = _WheelStorage(now: now, capacity: capacity)
        for n in 0 ..< highWater {
            let link = self.link(n).pointee
            (copy.nodes + n &* _WheelNodeLayout<Payload>.stride).initializeMemory(as: _WheelLink.self, to: link)
            if link.generation & 1 == 1 {
                (copy.nodes + n &* _WheelNodeLayout<Payload>.stride + _WheelNodeLayout<Payload>.payloadOffset)
                    .initializeMemory(as: Payload.self, to: payload(n).pointee)
            }
        }
        copy.heads.update(from: heads, count: _WheelLayout.chainCount)
        copy.tails.update(from: tails, count: _WheelLayout.chainCount)
        copy.chainMasks.update(from: chainMasks, count: _WheelLayout.listCount)
        copy.occupied.update(from: occupied, count: _WheelLayout.levelCount)
        copy.header.pointee.highWater = highWater
        copy.freeHead = freeHead
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
        let newNodes = UnsafeMutableRawPointer.allocate(
            byteCount: newCapacity &* _WheelNodeLayout<Payload>.stride, alignment: _WheelNodeLayout<Payload>.alignment)
        // Embedded Swift has no metatype values: there every payload is moved node by node.
        #if hasFeature(Embedded)
        let bitwiseTakable = false
        #else
        let bitwiseTakable = _isBitwiseTakable(Payload.self)
        #endif
        if bitwiseTakable {
            newNodes.copyMemory(from: nodes, byteCount: highWater &* _WheelNodeLayout<Payload>.stride)
        } else {
            for n in 0 ..< highWater {
                let node = newNodes + n &* _WheelNodeLayout<Payload>.stride
                let link = self.link(n).pointee
                node.initializeMemory(as: _WheelLink.self, to: link)
                if link.generation & 1 == 1 {
                    (node + _WheelNodeLayout<Payload>.payloadOffset)
                        .moveInitializeMemory(as: Payload.self, from: payload(n), count: 1)
                }
            }
        }
        nodes.deallocate()
        header.pointee.nodes = newNodes
        header.pointee.capacity = newCapacity
    }

    /// A node off the free list, or a fresh one, made live (odd generation) with `deadline`;
    /// its payload is still to be initialized.
    @inlinable @inline(__always)
    func allocateNode(deadline: UInt64) -> Int32 {
        let n: Int32
        if freeHead >= 0 {
            n = freeHead
            freeHead = link(n).pointee.next
        } else {
            if highWater == capacity { grow(to: capacity &+ 1) }
            n = Int32(truncatingIfNeeded: highWater)
            (nodes + highWater &* _WheelNodeLayout<Payload>.stride).initializeMemory(as: _WheelLink.self, to: _WheelLink())
            header.pointee.highWater &+= 1
        }
        let link = self.link(n)
        link.pointee.generation &+= 1
        link.pointee.deadline = deadline
        return n
    }

    /// Returns a node (already unlinked) to the free list and hands back its payload.
    @inlinable @inline(__always)
    func releaseNode(_ n: Int32) -> Payload {
        let payload = self.payload(Int(n)).move()
        let link = self.link(n)
        link.pointee.generation &+= 1
        link.pointee.next = freeHead
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

    /// Appends node `n` to `chain`.
    @inlinable @inline(__always)
    func append(_ n: Int32, to chain: Int) {
        let list = chain / _WheelLayout.stripes
        let bit: _WheelLayout.ChainMask = 1 &<< _WheelLayout.ChainMask(truncatingIfNeeded: chain % _WheelLayout.stripes)
        let mask = chainMasks[list]
        let node = self.link(n)
        node.pointee.next = -1
        if mask & bit == 0 {
            node.pointee.prev = -1
            heads[chain] = n
            if mask == 0 && list < _WheelLayout.wheelListCount { markOccupied(list) }
            chainMasks[list] = mask | bit
        } else {
            let tail = tails[chain]
            node.pointee.prev = tail
            link(tail).pointee.next = n
        }
        tails[chain] = n
    }

    /// Removes node `n` from the chain it is in (which its deadline and `now` say).
    @inlinable @inline(__always)
    func unlink(_ n: Int32) {
        let node = self.link(n)
        let chain = _WheelLayout.chain(now: now, deadline: node.pointee.deadline)
        let prev = node.pointee.prev
        let next = node.pointee.next
        if prev < 0 { heads[chain] = next } else { link(prev).pointee.next = next }
        if next < 0 { tails[chain] = prev } else { link(next).pointee.prev = prev }
        if prev < 0 && next < 0 {
            let list = chain / _WheelLayout.stripes
            let mask = chainMasks[list] & ~(1 &<< _WheelLayout.ChainMask(truncatingIfNeeded: chain % _WheelLayout.stripes))
            chainMasks[list] = mask
            if mask == 0 {
                if list < _WheelLayout.wheelListCount { markEmpty(list) } else { dueSorted = true }
            }
        }
    }

    /// Files node `n` (deadline > `now`) in its wheel chain, or (deadline <= `now`) in the due list.
    @inlinable @inline(__always)
    func file(_ n: Int32, deadline: UInt64) {
        if deadline > now {
            append(n, to: _WheelLayout.chain(now: now, deadline: deadline))
        } else {
            if chainMasks[_WheelLayout.dueList] != 0 && link(tails[_WheelLayout.dueChain]).pointee.deadline > deadline {
                dueSorted = false
            }
            append(n, to: _WheelLayout.dueChain)
        }
    }

    // MARK: Operations

    @inlinable
    func schedule(at deadline: UInt64, _ payload: Payload) -> TimerHandle {
        let n = allocateNode(deadline: deadline)
        (nodes + Int(n) &* _WheelNodeLayout<Payload>.stride + _WheelNodeLayout<Payload>.payloadOffset)
            .initializeMemory(as: Payload.self, to: payload)
        file(n, deadline: deadline)
        count &+= 1
        if cacheValid {
            if let cached = cachedNext, cached <= deadline {} else { cachedNext = deadline }
        }
        return TimerHandle(index: UInt32(truncatingIfNeeded: n), generation: link(n).pointee.generation)
    }

    @inlinable @inline(__always)
    func isPending(_ handle: TimerHandle) -> Bool {
        let i = Int(handle.index)
        return i < highWater && link(i).pointee.generation == handle.generation && handle.generation & 1 == 1
    }

    /// Cancels the timer `handle` names; it must be pending (`isPending(handle)`).
    @inlinable
    func cancel(_ handle: TimerHandle) -> Payload {
        let n = Int32(truncatingIfNeeded: handle.index)
        unlink(n)
        if cacheValid && cachedNext == link(n).pointee.deadline { cacheValid = false }
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

    /// The earliest deadline, from the bitmaps plus at most one slot's scan.
    @inlinable
    func computeNextDeadline() -> UInt64? {
        if chainMasks[_WheelLayout.dueList] != 0 {
            let due = heads[_WheelLayout.dueChain]
            // Due deadlines are all <= now < every wheel deadline.
            return dueSorted ? link(due).pointee.deadline : minimumDeadline(from: due)
        }
        if levelMask == 0 { return nil }
        let level = levelMask.trailingZeroBitCount
        let slot = occupied[level].trailingZeroBitCount
        if level == 0 { return _WheelLayout.slotStart(level: 0, slot: slot, now: now) }
        let list = level &* 64 &+ slot
        var mask = chainMasks[list]
        var minimum = UInt64.max
        while mask != 0 {
            let chain = list &* _WheelLayout.stripes &+ mask.trailingZeroBitCount
            minimum = min(minimum, minimumDeadline(from: heads[chain]))
            mask &= mask &- 1
        }
        return minimum
    }

    /// The minimum deadline of the chain starting at `head`; `UInt64.max` when empty.
    @inlinable
    func minimumDeadline(from head: Int32) -> UInt64 {
        var n = head
        var minimum = UInt64.max
        while n >= 0 {
            minimum = min(minimum, link(n).pointee.deadline)
            n = link(n).pointee.next
        }
        return minimum
    }

    /// Frees node `n` (unlinked) and passes it to `body`.
    @inlinable @inline(__always)
    func fire(_ n: Int32, _ body: (TimerHandle, UInt64, Payload) -> Void) {
        let deadline = link(n).pointee.deadline
        let handle = TimerHandle(index: UInt32(truncatingIfNeeded: n), generation: link(n).pointee.generation)
        body(handle, deadline, releaseNode(n))
    }

    /// Cascades node `n` from a slot that opens at `start` (= `now`): fires it if due then and
    /// `budget` allows (spending one), else files it again: lower in the wheel, or (due, over the
    /// budget) at the end of the due list, where it keeps its order among the ties.
    @inlinable @inline(__always)
    func cascade(_ n: Int32, start: UInt64, budget: inout Int, _ body: (TimerHandle, UInt64, Payload) -> Void) {
        let deadline = link(n).pointee.deadline
        if deadline == start {
            if budget > 0 {
                budget &-= 1
                fire(n, body)
            } else {
                file(n, deadline: deadline)
            }
        } else {
            append(n, to: _WheelLayout.chain(now: start, deadline: deadline))
        }
    }

    /// See `TimingWheel.advance(to:limit:_:)`, which documents the never-early guarantee kept
    /// here and what is left when `limit` timers have fired.
    @inlinable
    func advance(to target: UInt64, limit: Int, _ body: (TimerHandle, UInt64, Payload) -> Void) -> Bool {
        var budget = limit
        if chainMasks[_WheelLayout.dueList] != 0 {
            cacheValid = false
            budget = fireDueList(budget: budget, body)
            // Over the budget: the rest of the due list waits, `now` stays.
            if chainMasks[_WheelLayout.dueList] != 0 { return true }
        }
        while levelMask != 0 {
            let level = levelMask.trailingZeroBitCount
            let slot = occupied[level].trailingZeroBitCount
            let start = _WheelLayout.slotStart(level: level, slot: slot, now: now)
            // Never early: a slot is opened only once its first tick has come.
            if start > target { break }
            cacheValid = false
            // Over the budget with a level-0 slot due (its one deadline is `start`): it waits,
            // `now` stays (at most `target`). A higher slot is cascaded whatever the budget: only
            // that says whether it holds a timer due by `target`.
            if budget == 0 && level == 0 { return true }
            now = start
            let list = level &* 64 &+ slot
            let first = list &* _WheelLayout.stripes
            var mask = chainMasks[list]
            chainMasks[list] = 0
            markEmpty(list)
            if level == 0 {
                // A level-0 slot holds the single deadline `start`, so a single chain.
                let chain = first &+ mask.trailingZeroBitCount
                var n = heads[chain]
                while n >= 0 {
                    if budget == 0 {
                        // The rest are due (deadline == start == now) and wait in the due list,
                        // which is empty here (it was emptied first): the chain's tail moves
                        // there whole, in order, O(1).
                        link(n).pointee.prev = -1
                        heads[_WheelLayout.dueChain] = n
                        tails[_WheelLayout.dueChain] = tails[chain]
                        chainMasks[_WheelLayout.dueList] = 1
                        dueSorted = true
                        return true
                    }
                    let next = link(n).pointee.next
                    budget &-= 1
                    fire(n, body)
                    n = next
                }
            } else {
                // Cascade: each node is due now (deadline == start, all in one chain, so they
                // fire in schedule order) or is re-filed lower (now == start < deadline).
                //
                // Walking a chain is pointer chasing: one cache miss at a time, and with a million
                // timers every node is a miss. So the chains are walked together, in two passes
                // over blocks: the first only follows `next` pointers, one step per chain per
                // round, which keeps up to 8 misses in flight; the second re-files the gathered
                // nodes, now in cache. Each chain's order is kept, which is all that ties need.
                //
                // The cascade is finished whatever the budget (it is not a fire, and each timer
                // is cascaded at most 10 times in its life); due timers past the budget wait in
                // the due list.
                let rounds = 28  // (28 + 1) × 8 × 4 bytes stay under the 1 KiB of guaranteed stack
                withUnsafeTemporaryAllocation(
                    of: Int32.self, capacity: _WheelLayout.stripes &* (rounds &+ 1)
                ) { scratch in
                    let cursors = scratch.baseAddress!
                    let gathered = cursors + _WheelLayout.stripes
                    var live = 0
                    while mask != 0 {
                        cursors[live] = heads[first &+ mask.trailingZeroBitCount]
                        live &+= 1
                        mask &= mask &- 1
                    }
                    while live > 0 {
                        var count = 0
                        var round = 0
                        while round < rounds && live > 0 {
                            var i = 0
                            while i < live {
                                let n = cursors[i]
                                gathered[count] = n
                                count &+= 1
                                let next = link(n).pointee.next
                                if next >= 0 {
                                    cursors[i] = next
                                    i &+= 1
                                } else {
                                    live &-= 1
                                    cursors[i] = cursors[live]
                                }
                            }
                            round &+= 1
                        }
                        for j in 0 ..< count { cascade(gathered[j], start: start, budget: &budget, body) }
                    }
                }
                if chainMasks[_WheelLayout.dueList] != 0 { return true }
            }
        }
        now = target
        return false
    }

    /// Fires the due list in deadline order, ties in schedule order, at most `budget` of it (the
    /// rest stays, in order); returns the budget left.
    @inlinable
    func fireDueList(budget: Int, _ body: (TimerHandle, UInt64, Payload) -> Void) -> Int {
        if !dueSorted { sortDueList() }
        var budget = budget
        var n = heads[_WheelLayout.dueChain]
        while n >= 0 && budget > 0 {
            let next = link(n).pointee.next
            budget &-= 1
            fire(n, body)
            n = next
        }
        if n >= 0 {
            link(n).pointee.prev = -1
            heads[_WheelLayout.dueChain] = n
        } else {
            chainMasks[_WheelLayout.dueList] = 0
        }
        return budget
    }

    /// Sorts the due list by deadline in place: a stable bottom-up merge sort of the linked list
    /// (S. Tatham's), O(d log d) time, no allocation.
    @inlinable
    func sortDueList() {
        var list = heads[_WheelLayout.dueChain]
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
                    q = link(q).pointee.next
                }
                var qSize = runLength
                while pSize > 0 || (qSize > 0 && q >= 0) {
                    let e: Int32
                    if pSize == 0 || (pSize > 0 && qSize > 0 && q >= 0
                        && link(q).pointee.deadline < link(p).pointee.deadline)
                    {
                        e = q
                        q = link(q).pointee.next
                        qSize &-= 1
                    } else {
                        e = p
                        p = link(p).pointee.next
                        pSize &-= 1
                    }
                    if tail >= 0 { link(tail).pointee.next = e } else { list = e }
                    link(e).pointee.prev = tail
                    tail = e
                }
                p = q
            }
            link(tail).pointee.next = -1
            if merges <= 1 {
                heads[_WheelLayout.dueChain] = list
                tails[_WheelLayout.dueChain] = tail
                dueSorted = true
                return
            }
            runLength &*= 2
        }
    }
}
