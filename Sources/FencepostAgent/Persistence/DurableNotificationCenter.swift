// The engine with its durable state: every output's changes are committed to SQLite (one
// transaction) before the caller acts on its deliveries.
//
// Delivery guarantee: each fire is recorded exactly once — the delivery row and the request's
// progress commit together, and the store refuses a delivery id it has seen, so a fire is never
// recorded twice, and a fire not committed before a crash is found again at restart (and handled
// by the request's missed-fire policy). The outward signal (buzzer, hook, a line on stdout)
// follows the commit, so it is at most once per fire: a crash between commit and signal loses
// that buzz, never repeats it; the delivery stays unacknowledged and the badge LED shows it
// after the restart.
//
// Power cuts: by default each commit is fsynced before `perform` returns. The agent sets
// `defersSync`: the commit is then in the kernel (safe from a crash of the process) when the buzzer
// sounds, and the fsync follows — on the store's sync thread (`startSyncThread`, `requestSync`),
// so that neither the due time → buzzer path nor the loop waits for the disk. A power cut inside
// that window (between commit and sync) may lose the delivery row of a buzz that sounded; the fire
// is then found again at restart and handled by its missed-fire policy — a second buzz, never a
// lost one.
import CivilTime
import FencepostLinux
import LocalNotifications

/// The notification center of the agent: a ``NotificationEngine`` whose every change is made
/// durable before it is acted upon.
public final class DurableNotificationCenter {
    public private(set) var engine: NotificationEngine
    public let store: NotificationStore
    /// Rows of the state file that could not be read at start (left untouched in the file).
    public let unreadableRows: [String]

    /// Opens the state file, puts the engine back in the state it had, and catches up on what fell
    /// due meanwhile (missed-fire policies). `restoreOutput` holds the deliveries of the catch-up,
    /// already committed.
    public convenience init(path: String, engine fresh: NotificationEngine, clock: EngineClock, guardState: Bool = false) throws(StoreError) {
        try self.init(path: path, engine: fresh, clock: { _ in clock }, guardState: guardState)
    }

    /// As ``init(path:engine:clock:)``, with the clock chosen from the file's meta values (a
    /// simulation resumes its virtual time from them).
    /// `guardState`: the agent's own state file, watched (``StateFileGuard``).
    public init(path: String, engine fresh: NotificationEngine, clock clockFromMeta: ([String: String]) -> EngineClock,
                guardState: Bool = false) throws(StoreError) {
        store = try NotificationStore(path: path, guardState: guardState)
        var loaded = try store.load()
        meta = loaded.meta
        let clock = clockFromMeta(loaded.meta)
        let (snapshot, problems) = StoreMapping.engineSnapshot(taking: &loaded, limits: fresh.configuration.limits)
        unreadableRows = problems.map { $0.description }
        engine = fresh
        restoreOutput = engine.restore(snapshot, clock: clock)
        // A configured request whose row cannot be read is lost to the engine: `apply` must not
        // take it for unchanged. Forgetting that it was applied makes the
        // next apply (start, SIGHUP, `fencepost apply`) install it again, reported as added.
        var forget: [StoreChange] = []
        for p in problems where p.what == "request" { forget.append(.removeAppliedRequest(id: p.id)) }
        for o in restoreOutput.outcomes where o.kind == .evicted { forget.append(.removeAppliedRequest(id: o.requestIdentifier)) }
        try store.apply(StoreMapping.storeChanges(restoreOutput.changes) + forget)
    }

    /// The file's meta values as they were at start.
    public let meta: [String: String]

    /// What the catch-up at start produced (committed).
    public private(set) var restoreOutput: EngineOutput

    /// Runs one engine operation and commits its changes; returns the output to act on.
    ///
    /// If the commit fails the engine's memory is ahead of the file: the caller must stop (the
    /// process exits and systemd restarts it from the last commit) — see ``StoreError``.
    /// `meta` values and `store` changes are written in the same transaction, after the engine's.
    /// `source`: who answers when the operation records a response (the control socket unless said).
    public func perform(meta extra: [(String, String)] = [], store extraChanges: [StoreChange] = [], answeredBy source: ResponseSource = .socket,
                        _ operation: (inout NotificationEngine) throws(RequestError) -> EngineOutput) throws(CenterError) -> EngineOutput {
        let out: EngineOutput
        do { out = try operation(&engine) } catch { throw .request(error) }
        let recorded = eventRecorder?(out, source) ?? []
        if !out.changes.isEmpty || !extra.isEmpty || !extraChanges.isEmpty || !recorded.isEmpty {
            // Rows made as they are written: an apply of a million zones never holds them all.
            var more = extra.map { StoreChange.setMeta(key: $0.0, value: $0.1) } + extraChanges + recorded
            // A request the caps evicted is no longer what `apply` installed: forgotten, so that
            // the next apply brings a configured one back when there is room.
            for o in out.outcomes where o.kind == .evicted { more.append(.removeAppliedRequest(id: o.requestIdentifier)) }
            let changes = Concatenation(first: StoreMapping.storeRows(out.changes), second: more)
            do { try store.apply(contentsOf: changes, sync: !defersSync) } catch { throw .store(error) }
        }
        return out
    }

    /// Rows that record an output's events elsewhere (the fleet link's outbox), written in the
    /// same transaction as the output's own changes: exactly one row per event across crashes.
    /// Called with who answered, for the output's responses.
    public var eventRecorder: ((EngineOutput, ResponseSource) -> [StoreChange])?

    /// Commit now, fsync at ``sync()``: set by the agent, which acts on an output between the two.
    public var defersSync = false

    /// Gives back the engine's spare array room (after a burst of adds, or when idle).
    public func releaseSpareCapacity() { engine.releaseSpareCapacity() }

    /// Makes every commit so far durable against a power cut (one fsync; nothing when none waits).
    public func sync() throws(CenterError) {
        do { try store.sync() } catch { throw .store(error) }
    }

    /// Hands the fsyncs to a thread of their own (``NotificationStore/startSyncThread()``): returns
    /// the descriptor that is readable after each completed sync.
    public func startSyncThread() throws(CenterError) -> FileDescriptor {
        do { return try store.startSyncThread() } catch { throw .store(error) }
    }

    /// Asks the sync thread to make every commit so far durable; returns the generation that
    /// covers them. Never waits.
    public func requestSync() -> UInt64 { store.requestSync() }

    /// The newest generation durable (after the sync thread's descriptor was readable); throws
    /// when a sync failed or the file is gone: the process must stop.
    public func completedSyncs() throws(CenterError) -> UInt64 {
        do { return try store.completedSyncs() } catch { throw .store(error) }
    }

    /// Writes a meta value (e.g. a simulation's anchor) in its own transaction.
    public func setMeta(_ key: String, _ value: String) throws(StoreError) {
        try store.apply([.setMeta(key: key, value: value)])
    }
}

/// Who answered a delivery: the `source` of a response event.
public enum ResponseSource: String, Sendable {
    /// The push button on the board.
    case button
    /// A client of the control socket (`fencepost ack`).
    case socket
    /// A fleet command (`ack` on the broker).
    case remote
}

/// Why an operation of the durable center failed.
public enum CenterError: Error, CustomStringConvertible {
    /// The request broke a rule: nothing changed.
    case request(RequestError)
    /// The state file could not be written: the process must stop.
    case store(StoreError)

    public var description: String {
        switch self {
        case .request(let e): e.message
        case .store(let e): "the state file could not be written: \(e)"
        }
    }
}
