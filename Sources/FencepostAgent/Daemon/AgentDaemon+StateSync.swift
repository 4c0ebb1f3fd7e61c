// When the agent's commits become durable, and what waits for that.
//
// Every engine output is committed before it is acted on; the fsync that makes it survive a power
// cut runs on the state file's sync thread (NotificationStore.startSyncThread), asked for at the
// end of each loop turn. The loop goes on meanwhile: a sync that waits behind another writer's
// stream (50–83 ms measured during a zone-set rebuild, more on an SD card) does not hold the
// next fix or timer back. A control reply says "done", so it waits in its connection until the
// sync that covers what it reports has completed (ControlConnections' `awaiting`). A failed sync
// stops the agent (exit 74): the replies that waited for it get a refusal instead.
//
// When the thread cannot be started, the fsyncs stay in the loop, as before: at the end of each
// turn, and before a reply is sent.
import CivilTime
import FencepostJSON
import FencepostLinux

extension AgentDaemon {
    /// Hands the fsyncs to the sync thread and watches its completions; on failure, keeps them in
    /// the loop and says so.
    func startSyncThread() {
        let descriptor: FileDescriptor
        do { descriptor = try center.startSyncThread() } catch {
            log.warning("state file: fsyncs stay on the loop thread (\(error))")
            return
        }
        do { try loop.register(descriptor, for: .readable, token: .stateSynced) } catch {
            // The thread runs; without its completions the loop waits for each sync itself.
            log.warning("state file: cannot watch the sync thread (\(error)); fsyncs wait in the loop")
            return
        }
        syncsInBackground = true
    }

    /// At the end of a loop turn: the fsync of what the turn committed, asked of the sync thread
    /// (or made here without it).
    func endTurnSync() {
        if syncsInBackground { _ = center.requestSync() } else { syncState() }
    }

    /// The sync thread completed: the replies that waited for it are sent; on failure the agent stops.
    func stateSynced(now: UInt64) {
        do {
            clients.synced(through: try center.completedSyncs(), now: now)
        } catch {
            fatal(error)
            clients.syncFailed(refusal: Self.notDurable(error), now: now)
        }
    }

    /// When the answers just given to a control connection may be sent.
    func replyDurability() -> ControlConnections.Durability {
        if syncsInBackground { return .after(center.requestSync()) }
        if let error = syncState() { return .failed(Self.notDurable(error)) }
        return .now
    }

    /// At stop: everything committed is made durable (the thread finishes its work), and the
    /// replies that waited for it are sent if the peers take them.
    func finalSync() {
        guard exitCode == nil || exitCode == 0 else { return }
        if syncState() == nil, syncsInBackground, let done = try? center.completedSyncs() {
            clients.synced(through: done, now: SystemClocks.boottimeNow().nanosecondsSinceBoot)
        }
    }

    /// Makes the commits so far durable, waiting for it; on failure the agent stops
    /// (``fatal(_:)``) and the error is returned, for the answers that would have said "done".
    @discardableResult
    func syncState() -> CenterError? {
        do { try center.sync() } catch {
            fatal(error)
            return error
        }
        return nil
    }

    func fatal(_ error: CenterError) {
        log.error("\(error); stopping (systemd restarts the agent from the last commit)")
        exitCode = 74
    }

    static func notDurable(_ error: CenterError) -> [UInt8] {
        RPCReply.error(RPCError(.serverError, "not done: the state could not be made durable (\(error)); the agent is stopping"), id: .null)
    }
}
