/// The outbox's sending window and bounds.
///
/// Sending: rows go to the broker in `seq` order, at most `window` handed to the MQTT library at a
/// time (W ≤ the broker's Receive Maximum); a row is deleted when its PUBACK comes (reason < 0x80)
/// and marked failed when refused (≥ 0x80: not authorized, quota, too large) — counted in health,
/// never retried by this process. Rows handed to one library object are never handed again while
/// it lives (it resends them itself); after a restart every row left is sent again, same id.
///
/// Bounds: `maximumRows` and `maximumBytes` (the bodies). When an insert would pass either, rows
/// are dropped by priority — transitions first, then other, deliveries, responses last; oldest
/// first within one — down to `lowWater` of each bound (so drops come in batches, each announced
/// by one `gap` event, never one per insert), and never a row handed to the library. When even
/// that frees too little the new event is refused and counted in the gap event.
public struct FleetOutboxBounds: Hashable, Sendable {
    public var maximumRows: Int
    public var maximumBytes: Int
    /// Handed to the library at a time.
    public var window: Int

    public init(maximumRows: Int = 100_000, maximumBytes: Int = 64 << 20, window: Int = 16) {
        self.maximumRows = max(16, maximumRows)
        self.maximumBytes = max(64 << 10, maximumBytes)
        self.window = max(1, window)
    }

    /// After a drop: 90 % of each bound.
    public var lowWaterRows: Int { maximumRows - maximumRows / 10 }
    public var lowWaterBytes: Int { maximumBytes - maximumBytes / 10 }

    /// Whether adding one row of `bytes` to `rows`/`total` stays within the bounds.
    public func admits(rows: Int, bytes total: Int, adding bytes: Int) -> Bool {
        rows + 1 <= maximumRows && total + bytes <= maximumBytes
    }
}
