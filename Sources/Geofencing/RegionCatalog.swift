import Position

/// The regions a monitor watches, by identifier and by slot, with their spatial index.
///
/// Dynamic changes: the index is static (a packed tree). An added region goes to a delta list that
/// every query scans; a removed one leaves a dead slot in the tree that queries skip (its slot is not
/// reused while the tree refers to it). When the delta exceeds 256 regions or the dead slots exceed
/// an eighth of the tree, the tree is rebuilt — lazily, at the next query, so that a burst of adds
/// (a config reload) pays for one bulk load: ~0.3 s at 1M regions, O(n). A caller with a thread to
/// spare builds it there instead (``indexSnapshot()``, ``IndexSnapshot/build()``,
/// ``install(_:)``): meanwhile queries scan the delta, and the tree is installed only when nothing
/// changed since the snapshot.
public struct RegionCatalog: Sendable {
    /// Regions by slot; nil for a free or dead slot.
    public private(set) var regions: [Region?] = []
    private var slotOf: [String: Int32] = [:]
    private var index = RegionIndex()
    /// Slots added since the tree was built.
    private var delta: Set<Int32> = []
    /// Removed slots the tree still refers to.
    private var dead = 0
    /// Slots the tree does not refer to and no region holds.
    private var free: [Int32] = []
    private var rebuildDue = false
    /// Adds and removes so far: a tree built from a snapshot is installed only when none came since.
    private var changes: UInt64 = 0
    /// A tree is being built from a snapshot: queries do not rebuild meanwhile.
    private var buildingElsewhere = false

    public static let maximumDelta = 256

    public init() {}

    /// Number of regions.
    public var count: Int { slotOf.count }

    public func slot(of identifier: String) -> Int32? { slotOf[identifier] }

    public subscript(identifier: String) -> Region? { slotOf[identifier].flatMap { regions[Int($0)] } }

    /// Adds `region`, replacing a region of the same identifier; returns its slot and the slot it
    /// replaced, if any.
    @discardableResult
    public mutating func add(_ region: Region) -> (slot: Int32, replaced: Int32?) {
        let replaced = remove(identifier: region.identifier)
        let slot: Int32
        if let s = free.popLast() {
            slot = s
            regions[Int(s)] = region
        } else {
            slot = Int32(regions.count)
            regions.append(region)
        }
        slotOf[region.identifier] = slot
        changes &+= 1
        delta.insert(slot)
        if delta.count > Self.maximumDelta { rebuildDue = true }
        return (slot, replaced)
    }

    /// Removes the region named `identifier`; returns the slot it had.
    @discardableResult
    public mutating func remove(identifier: String) -> Int32? {
        guard let slot = slotOf.removeValue(forKey: identifier) else { return nil }
        regions[Int(slot)] = nil
        changes &+= 1
        if delta.remove(slot) != nil {
            free.append(slot)
        } else {
            dead += 1
            if dead > max(Self.maximumDelta, index.count / 8) { rebuildDue = true }
        }
        return slot
    }

    /// Rebuilds the tree now if changes made it due (and none is being built from a snapshot).
    public mutating func rebuildIfDue() { if rebuildDue && !buildingElsewhere { rebuild() } }

    /// Bulk-loads the tree over all live regions.
    /// - Complexity: O(n).
    public mutating func rebuild() {
        buildingElsewhere = false
        _ = install(IndexSnapshot(regions: regions, changes: changes).build())
    }

    /// The regions as they are now, to build the tree from elsewhere (another thread); nil when
    /// no rebuild is due. Until ``install(_:)`` or ``abandonSnapshot()``, queries scan the delta
    /// (O(delta) each) instead of rebuilding. O(1): the regions are shared, copied on write.
    public mutating func indexSnapshot() -> IndexSnapshot? {
        guard rebuildDue else { return nil }
        buildingElsewhere = true
        return IndexSnapshot(regions: regions, changes: changes)
    }

    /// Installs a tree built from a snapshot; false when regions were added or removed since
    /// (nothing changes then, and queries rebuild again when due).
    /// - Complexity: O(1).
    @discardableResult
    public mutating func install(_ built: BuiltIndex) -> Bool {
        buildingElsewhere = false
        guard built.changes == changes else { return false }
        index = built.index
        delta.removeAll()
        dead = 0
        free = built.free
        rebuildDue = false
        return true
    }

    /// The snapshot's tree will not come: queries rebuild again when due.
    public mutating func abandonSnapshot() { buildingElsewhere = false }

    /// The regions of a catalog at one moment, to build its tree from.
    public struct IndexSnapshot: Sendable {
        let regions: [Region?]
        let changes: UInt64

        /// The tree over the live regions, and the free slots.
        /// - Complexity: O(n log n).
        public func build() -> BuiltIndex {
            let regions = self.regions
            let index = RegionIndex(regions.indices.lazy.compactMap { i in
                regions[i].map { (slot: Int32(i), shape: $0.shape) }
            })
            return BuiltIndex(index: index, free: regions.indices.reversed().compactMap { regions[$0] == nil ? Int32($0) : nil }, changes: changes)
        }
    }

    /// A tree built from an ``IndexSnapshot``.
    public struct BuiltIndex: Sendable {
        let index: RegionIndex
        let free: [Int32]
        let changes: UInt64
    }

    /// Replaces `results` with the slots of live regions whose bounding box meets the cap of
    /// `angularRadius` radians around `center` (a superset of the regions within that distance).
    /// - Complexity: O(log n + k + delta), delta ≤ 256.
    public func candidates(near center: Coordinate, angularRadius: Double, into results: inout [Int32]) {
        index.candidates(near: center, angularRadius: angularRadius, into: &results)
        if dead > 0 { results.removeAll { regions[Int($0)] == nil } }
        results.append(contentsOf: delta)
    }

    /// Replaces `results` with the slots of live regions whose signed distance to `point` is ≤ `margin`.
    public func query(_ point: Coordinate, margin: Double = 0, into results: inout [Int32]) {
        index.query(point, margin: margin, into: &results)
        if dead > 0 { results.removeAll { regions[Int($0)] == nil } }
        for s in delta where regions[Int(s)]!.shape.isWithin(point, margin: margin) { results.append(s) }
    }

    /// Bytes of the index (see ``RegionIndex/memoryFootprint``).
    public var indexFootprint: Int { index.memoryFootprint }
}
