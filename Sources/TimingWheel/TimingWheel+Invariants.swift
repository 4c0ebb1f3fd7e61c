// Structural checks, run at the end of every mutating method in debug builds and compiled out in
// release (as swift-collections' `Heap+Invariants.swift`).

extension TimingWheel {
    /// Whether this build of the target checks invariants after every mutation (debug builds).
    /// Benchmarks refuse to run when it is `true`.
    ///
    /// - Complexity: O(1).
    public static var _invariantChecksEnabled: Bool {
        #if DEBUG
        return true
        #else
        return false
        #endif
    }

    /// Verifies the whole structure; traps on the first violation.
    ///
    /// - Complexity: O(capacity) in debug builds; nothing in release builds.
    @inlinable @inline(__always)
    public func _checkInvariants() {
        #if DEBUG
        _storage._checkInvariants()
        #endif
    }
}

extension _WheelStorage {
    /// Every live node is in the list its deadline maps to given `now`, lists are well linked,
    /// bitmaps equal list occupancy, the counts add up, the free list holds exactly the free nodes,
    /// and a valid cache holds the true next deadline.
    ///
    /// Written with `while` loops and field reads through the pointer: this runs after every
    /// mutation of every debug test, unoptimized.
    @usableFromInline
    func _checkInvariants() {
        precondition(highWater <= capacity && highWater <= Int(Int32.max), "slab bounds")
        var seen = 0
        var list = 0
        while list < _WheelLayout.listCount {
            var mask = chainMasks[list]
            if list < _WheelLayout.wheelListCount {
                let bit = occupied[list &>> 6] &>> UInt64(list & 63) & 1 == 1
                precondition(bit == (mask != 0), "bitmap of list \(list) disagrees with its chains")
            } else {
                precondition(mask <= 1, "the due list uses one chain only")
            }
            while mask != 0 {
                let chain = list &* _WheelLayout.stripes &+ mask.trailingZeroBitCount
                mask &= mask &- 1
                var prev: Int32 = -1
                var n = heads[chain]
                precondition(n >= 0, "chain \(chain) marked non-empty has no head")
                var previousDeadline: UInt64 = 0
                while n >= 0 {
                    precondition(Int(n) < highWater, "node index \(n) beyond the slab")
                    let link = self.link(n).pointee
                    let deadline = link.deadline
                    precondition(isLive(Int(n)), "free node \(n) in chain \(chain)")
                    precondition(link.prev == prev, "node \(n): broken prev link")
                    precondition(
                        _WheelLayout.chain(now: now, deadline: deadline) == chain,
                        "node \(n) (deadline \(deadline), now \(now)) is in chain \(chain)")
                    if list < _WheelLayout.wheelListCount {
                        precondition(deadline > now, "node \(n) in the wheel is not after now")
                    } else {
                        precondition(deadline <= now, "due node \(n) is after now")
                        precondition(!dueSorted || deadline >= previousDeadline, "due list not sorted")
                        previousDeadline = deadline
                    }
                    seen += 1
                    precondition(seen <= highWater, "cycle in chain \(chain)")
                    prev = n
                    n = link.next
                }
                precondition(tails[chain] == prev, "tail of chain \(chain)")
            }
            list += 1
        }
        if chainMasks[_WheelLayout.dueList] == 0 { precondition(dueSorted, "an empty due list is sorted") }
        var level = 0
        while level < _WheelLayout.levelCount {
            precondition((levelMask &>> UInt64(level) & 1 == 1) == (occupied[level] != 0), "levelMask")
            level += 1
        }
        precondition(levelMask &>> UInt64(_WheelLayout.levelCount) == 0, "levelMask beyond levels")
        precondition(occupied[10] &>> 16 == 0, "level 10 uses slots beyond 2^64")
        precondition(seen == count, "count \(count) but \(seen) nodes in lists")

        var free = 0
        var n = freeHead
        while n >= 0 {
            precondition(Int(n) < highWater, "free node index \(n) beyond the slab")
            precondition(!isLive(Int(n)), "free-list node \(n) is live")
            free += 1
            precondition(free <= highWater, "cycle in the free list")
            n = link(n).pointee.next
        }
        precondition(free + count == highWater, "\(free) free + \(count) live != \(highWater) nodes")

        if cacheValid {
            precondition(cachedNext == computeNextDeadline(), "stale nextDeadline cache")
        }
    }
}
