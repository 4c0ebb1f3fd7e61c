// The control socket's connections (design §6), kept apart from the daemon the way swift-nio
// keeps each concern in its own handler: accepting, the peer check, line framing, reading,
// buffered writing, back-pressure, timeouts and closing. What a line means is not its business:
// the daemon passes a closure that answers one line. The listener's rest after a failed accept
// is a ListenerRest; the summary line of connections closed early or refused, a
// ControlClosureReport.
//
// Size: one concern, a connection's life from accept to close (framing, durability, answers
// owed, timeouts, back-pressure), every part of it reading and writing the same Connection.
//
// Each connection is watched for what it can do next (level-triggered epoll):
//
//   state                                         interest
//   output queued < maximumQueuedOutput            readable + hangup (+ writable while output is queued)
//   output queued ≥ maximumQueuedOutput            writable only: its input waits until the peer reads
//   peer closed its side (EOF), output queued      writable only, closed once written
//   refused / over-long line, output queued        writable only, closed once written
//
// A reply larger than the socket buffer is finished by writable events. A client that pipelines
// requests and never reads stops being read once its queue is full, and is closed when the queue
// makes no progress for `writeTimeout`. The bounds are in ControlLimits.swift.
//
// Durability: a reply says "done", so what it reports must survive a power cut before it is
// sent. The daemon says, after a connection's lines were answered, whether that is so now, or
// from which sync generation on (the state file's fsyncs run on a thread of their own): the
// answers wait in the connection's `awaiting` buffer, in order, until ``synced(through:now:)``
// reports that generation, and count towards the queue's bound meanwhile. When the sync fails
// they are not sent: a refusal goes instead (``syncFailed(refusal:now:)``), then the end.
//
// Answers owed: a line whose answer comes in a later turn (the socket's `apply`, carried out in
// parts) leaves its connection owing it. Meanwhile nothing more is read or answered on it (lines
// it sent after wait in the framer, in order), it is watched for nothing but the output still
// queued, and it is not closed for idleness or for its peer's end of input; once the answer is
// given (``settle(_:answer:now:durability:)``, waiting for the sync as every answer does), its
// lines are answered again from the one after. A connection that fails, is evicted or is closed
// meanwhile is gone: its answer is dropped.
import FencepostJSON
import FencepostLinux

/// The listening control socket and its open connections, registered with the daemon's loop.
final class ControlConnections {
    /// One accepted connection.
    struct Connection {
        var socket: UnixConnection
        var framer: LineFramer
        /// Refused or sent an over-long line: no more input is read; closed once the output is written.
        var closeAfterFlush = false
        /// The peer closed its side: nothing more to read; closed once the output is written.
        var peerClosed = false
        /// What the loop watches it for now.
        var interest: Interest
        /// Last bytes read or written, or a line answered (boot-time ns).
        var lastActivity: UInt64
        /// Since when a partial line waits for its end.
        var partialSince: UInt64?
        /// Since when queued output has not moved.
        var stalledSince: UInt64?
        /// Bytes it held (framer, awaiting answers and output queue) when last worked on; summed in `held`.
        var held = 0
        /// Answers that wait for the state file's sync `awaitingGeneration` (see the top).
        var awaiting: [UInt8] = []
        var awaitingGeneration: UInt64 = 0
        /// A line's answer comes in a later turn (see the top): no line is answered, nor input read, until then.
        var owesAnswer = false
        /// Output queued or awaiting a sync.
        var queuedCount: Int { socket.pendingOutputCount + awaiting.count }
        var hasOutput: Bool { socket.hasPendingOutput || !awaiting.isEmpty }
    }

    /// What the daemon does with a line.
    enum Answer {
        /// This answer (nil: none, a JSON-RPC notification) now.
        case now([UInt8]?)
        /// Later: the connection owes it until ``ControlConnections/settle(_:answer:now:durability:)``.
        case later
    }

    /// When the answers a connection just got may be sent.
    enum Durability {
        /// At once: nothing they report waits for a sync.
        case now
        /// Once the state file's sync of this generation has completed.
        case after(UInt64)
        /// Never: the state could not be made durable. This refusal is sent instead, then the end.
        case failed([UInt8])
    }

    /// The listening socket (registered by the daemon for `.readable` with token `.listener`).
    let listener: UnixListener
    let loop: EventLoop<DaemonToken>
    /// Who may connect.
    let policy: ControlPolicy
    /// The longest line a client may send.
    private(set) var maximumMessageBytes: Int
    private(set) var limits: ControlLimits
    /// `limits`' cap under this process's descriptor limit.
    private(set) var connectionCap: Int
    let log: DaemonLog
    private(set) var connections: [UInt32: Connection] = [:]
    private var nextConnectionID: UInt32 = 0
    /// One read buffer for every connection (the loop has one thread), made at the first read
    /// and let go by ``releaseIdleMemory()``: 64 kB of an idle agent's few megabytes.
    private var buffer: [UInt8] = []
    /// While accept fails: the listener is not watched until its rest is over.
    private var rest = ListenerRest()
    /// Connections closed early or refused, for one summary log line.
    private var closures = ControlClosureReport()
    /// Bytes held by all connections' buffers: the heap is trimmed once a burst of them is over.
    private var held = BurstMemory()
    /// The newest sync generation reported complete.
    private(set) var syncedGeneration: UInt64 = 0

    init(listener: UnixListener, loop: EventLoop<DaemonToken>, policy: ControlPolicy, maximumMessageBytes: Int,
         limits: ControlLimits = ControlLimits(), log: DaemonLog) {
        self.listener = listener; self.loop = loop; self.policy = policy
        self.maximumMessageBytes = maximumMessageBytes; self.limits = limits; self.log = log
        connectionCap = limits.connectionCap(descriptorLimit: DescriptorLimit.soft)
    }

    /// New limits (a SIGHUP): the timeouts and the cap hold from now on for every connection, the
    /// message size for connections accepted from now on (an open one keeps the line buffer it has).
    /// Connections above a lowered cap are closed, least recently active first, as new ones arrive.
    func reconfigure(maximumMessageBytes: Int, limits: ControlLimits) {
        self.maximumMessageBytes = maximumMessageBytes
        self.limits = limits
        connectionCap = limits.connectionCap(descriptorLimit: DescriptorLimit.soft)
    }

    /// Lets go of the read buffer while no connection is open (the loop has been idle a while).
    func releaseIdleMemory() {
        if connections.isEmpty { buffer = [] }
    }

    /// Open connections.
    var count: Int { connections.count }

    // MARK: Accepting

    /// Accepts the waiting connections (at most 64 a turn, so the loop stays responsive). At the
    /// cap, or when this process is out of descriptors (EMFILE), the least recently active
    /// connection is closed to make room. With none to close, or when the whole system is out
    /// (ENFILE: closing our own clients would not make room for us alone), or on another failure,
    /// the listener rests (100 ms, doubling to 2 s).
    func acceptAll(now: UInt64) {
        for _ in 0..<64 {
            let c: UnixConnection?
            do { c = try listener.accept() } catch {
                if case .system(_, let errno) = error.reason, errno == .processDescriptorLimit, !connections.isEmpty {
                    evictLeastActive()
                    continue
                }
                if case .system(_, let errno) = error.reason {
                    rest.pause(listener, loop: loop, log: log, now: now, because: "\(errno)")
                } else {
                    rest.pause(listener, loop: loop, log: log, now: now, because: "\(error)")
                }
                return
            }
            guard let c else { rest.accepted(log: log, now: now, connection: false); return }
            rest.accepted(log: log, now: now, connection: true)
            if connections.count >= connectionCap { evictLeastActive() }
            add(c, now: now)
        }
    }

    private func add(_ c: UnixConnection, now: UInt64) {
        var id = nextConnectionID
        while connections[id] != nil { id &+= 1 }     // after 2^32 connections, skip the ones still open
        nextConnectionID = id &+ 1
        var connection = Connection(socket: c, framer: LineFramer(maximumLineLength: maximumMessageBytes),
                                    interest: [.readable, .hangup], lastActivity: now)
        // Fail closed: a peer whose credentials cannot be read is refused.
        let refusal: [UInt8]?
        switch Result(catching: { () throws(Errno) in try c.peerCredentials() }) {
        case .success(let peer):
            refusal = policy.refusal(peer)
            if refusal != nil { closures.countRefusal("uid \(peer.userID), pid \(peer.processID)") }
        case .failure(let e):
            refusal = ControlPolicy.unreadableCredentials(e).line
            closures.countRefusal("credentials unreadable: \(e)")
        }
        if let refusal {
            c.enqueue(refusal)
            connection.closeAfterFlush = true
            connection.interest = .writable
        }
        do { try loop.register(c.descriptor, for: connection.interest, token: .connection(id)) } catch {
            log.warning("control: cannot watch a new connection: \(error)")
            return
        }
        connections[id] = connection
        if refusal != nil { handle(id, now: now, answer: { _ in .now(nil) }, durability: { .now }) }
    }

    private func evictLeastActive() {
        guard let oldest = connections.min(by: { $0.value.lastActivity < $1.value.lastActivity })?.key else { return }
        closures.count(.evicted)
        close(oldest)
    }

    // MARK: Reading and writing

    /// Works on connection `id` after the loop reported it ready: writes queued output, then
    /// answers its complete lines with `answer` and reads more, while its queued output is under
    /// the bound and it owes no answer. `durability` runs once after lines were answered, and
    /// says when the answers may be sent.
    func handle(_ id: UInt32, now: UInt64, answer: ([UInt8]) -> Answer, durability: () -> Durability) {
        guard var c = connections[id] else { return }
        var failed = false
        write(&c, now: now, failed: &failed)
        var answered = false
        var reads = 0
        // Whether the framer ran out of whole lines: only then are bytes it holds a line the
        // client has not finished. Lines waiting behind a full output queue are whole.
        var needsLineEnd = false
        reading: while !failed {
            needsLineEnd = false
            while !c.closeAfterFlush, !c.owesAnswer, c.queuedCount < limits.maximumQueuedOutput {
                guard let framed = c.framer.next() else { needsLineEnd = true; break }
                switch framed {
                case .line(let line):
                    switch answer(line) {
                    case .now(let l):
                        if let l { c.awaiting.append(contentsOf: l) }
                        answered = true
                    case .later: c.owesAnswer = true
                    }
                    c.lastActivity = now
                case .tooLong:
                    c.awaiting.append(contentsOf: ControlService.tooLong(limit: maximumMessageBytes))
                    c.closeAfterFlush = true
                }
            }
            if c.closeAfterFlush || c.peerClosed || c.owesAnswer || c.queuedCount >= limits.maximumQueuedOutput
                || reads >= limits.readsPerTurn { break }
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 65_536) }
            let r: SocketRead
            // A Result inside: withUnsafeMutableBytes rethrows untyped, which Embedded Swift refuses.
            switch buffer.withUnsafeMutableBytes({ b in Result { () throws(Errno) in try c.socket.read(into: b) } }) {
            case .success(let read): r = read
            case .failure:
                failed = true
                break reading
            }
            reads += 1
            switch r {
            case .bytes(let n):
                c.framer.append(buffer[..<n])
                c.lastActivity = now
            case .wouldBlock:
                reads = limits.readsPerTurn
            case .closed:
                c.peerClosed = true
            }
        }
        // A reply says "done": what it reports must survive a power cut first (see the top).
        if answered {
            switch durability() {
            case .now: c.awaitingGeneration = 0
            case .after(let generation): c.awaitingGeneration = max(c.awaitingGeneration, generation)
            case .failed(let refusal): refuse(&c, refusal)
            }
        }
        if c.awaitingGeneration <= syncedGeneration { release(&c) }
        if needsLineEnd && c.framer.bufferedCount > 0 { c.partialSince = c.partialSince ?? now } else { c.partialSince = nil }
        finish(id, &c, now: now, failed: failed)
    }

    /// The answer connection `id` owed (nil: none, a notification's) is given, after the answers
    /// before it, and sent once `durability` allows; the lines it sent after are answered when it
    /// is next handled. Returns whether the connection is still open and had owed an answer: then
    /// its buffered lines wait for ``handle(_:now:answer:durability:)`` (no event may come for them).
    func settle(_ id: UInt32, answer: [UInt8]?, now: UInt64, durability: () -> Durability) -> Bool {
        guard var c = connections[id], c.owesAnswer else { return false }
        c.owesAnswer = false
        c.lastActivity = now
        if let answer { c.awaiting.append(contentsOf: answer) }
        switch durability() {
        case .now: c.awaitingGeneration = 0
        case .after(let generation): c.awaitingGeneration = max(c.awaitingGeneration, generation)
        case .failed(let refusal): refuse(&c, refusal)
        }
        if c.awaitingGeneration <= syncedGeneration { release(&c) }
        finish(id, &c, now: now, failed: false)
        return connections[id] != nil
    }

    /// The state file's syncs up to `generation` have completed: sends the answers that waited
    /// for them.
    /// - Complexity: O(open connections), at most the cap; once per completed sync.
    func synced(through generation: UInt64, now: UInt64) {
        guard generation > syncedGeneration else { return }
        syncedGeneration = generation
        for (id, connection) in connections where !connection.awaiting.isEmpty && connection.awaitingGeneration <= generation {
            var c = connection
            release(&c)
            finish(id, &c, now: now, failed: false)
        }
    }

    /// A sync failed: no answer that waits for one is sent; each such connection gets `refusal`,
    /// then its end.
    func syncFailed(refusal: [UInt8], now: UInt64) {
        for (id, connection) in connections where !connection.awaiting.isEmpty {
            var c = connection
            refuse(&c, refusal)
            finish(id, &c, now: now, failed: false)
        }
    }

    /// Moves the answers that waited into the output queue.
    private func release(_ c: inout Connection) {
        guard !c.awaiting.isEmpty else { return }
        c.socket.enqueue(c.awaiting)
        c.awaiting = []
        c.awaitingGeneration = 0
    }

    private func refuse(_ c: inout Connection, _ refusal: [UInt8]) {
        c.awaiting = []
        c.awaitingGeneration = 0
        c.socket.enqueue(refusal)
        c.closeAfterFlush = true
    }

    /// Writes what can be written, counts what the connection holds, and closes it or watches it
    /// for what it can do next.
    private func finish(_ id: UInt32, _ c: inout Connection, now: UInt64, failed: Bool) {
        var failed = failed
        write(&c, now: now, failed: &failed)
        let holding = c.framer.bufferedCount + c.queuedCount
        held.change(from: c.held, to: holding)
        c.held = holding
        c.framer.releaseMemoryIfEmpty()
        if failed || !c.hasOutput && (c.closeAfterFlush || c.peerClosed && !c.owesAnswer) {
            connections[id] = c
            close(id)
            return
        }
        watch(id, &c)
        connections[id] = c
    }

    /// Writes what the socket takes; notes progress and stalls.
    private func write(_ c: inout Connection, now: UInt64, failed: inout Bool) {
        guard c.socket.hasPendingOutput else { c.stalledSince = nil; return }
        let before = c.socket.pendingOutputCount
        do { _ = try c.socket.flush() } catch { failed = true; return }
        if c.socket.pendingOutputCount < before { c.lastActivity = now; c.stalledSince = nil }
        if c.socket.hasPendingOutput { c.stalledSince = c.stalledSince ?? now } else { c.stalledSince = nil }
    }

    /// Registers the interest the connection's state calls for (see the table at the top).
    private func watch(_ id: UInt32, _ c: inout Connection) {
        var interest: Interest = []
        if !c.closeAfterFlush && !c.peerClosed && !c.owesAnswer && c.queuedCount < limits.maximumQueuedOutput {
            interest = [.readable, .hangup]
        }
        if c.socket.hasPendingOutput { interest.insert(.writable) }
        guard interest != c.interest else { return }
        do {
            try loop.modify(c.socket.descriptor, for: interest, token: .connection(id))
            c.interest = interest
        } catch {
            log.warning("control: cannot change what connection \(id) is watched for: \(error)")
        }
    }

    // MARK: Time

    /// The earliest instant something must happen without input: a timeout or the listener's rest.
    /// - Complexity: O(connections), at most the cap.
    var nextDeadline: UInt64? {
        var next = rest.pausedUntil
        if let due = closures.heldLineDue { next = min(next ?? due, due) }
        for c in connections.values {
            let d = deadline(of: c)
            next = min(next ?? d, d)
        }
        return next
    }

    private func deadline(of c: Connection) -> UInt64 {
        // Owing an answer, it is not idle: the agent is working for it.
        var d = c.owesAnswer ? UInt64.max : c.lastActivity &+ limits.idleTimeout
        if let s = c.partialSince { d = min(d, s &+ limits.requestTimeout) }
        if let s = c.stalledSince { d = min(d, s &+ limits.writeTimeout) }
        return d
    }

    /// Closes the connections whose time is up, lets the listener accept again after its rest,
    /// gives the heap back after a burst, and logs one summary line of what was closed or refused.
    func advance(to now: UInt64) {
        #if DEBUG
        precondition(held.total == connections.values.reduce(0) { $0 + $1.held }, "ControlConnections: the total held is not the sum of what connections hold")
        #endif
        rest.resumeIfOver(listener, loop: loop, now: now)
        var expired: [(UInt32, Bool)] = []
        for (id, c) in connections where deadline(of: c) <= now {
            let stalled = c.stalledSince.map { $0 &+ limits.writeTimeout <= now } ?? false
            let incomplete = c.partialSince.map { $0 &+ limits.requestTimeout <= now } ?? false
            closures.count(stalled ? .slow : incomplete ? .incomplete : .idle)
            expired.append((id, incomplete && !stalled))
        }
        for (id, incomplete) in expired {
            if incomplete, let c = connections[id] {
                // Best effort: say why before closing (never waits).
                c.socket.enqueue(RPCReply.error(RPCError(.invalidRequest, "invalid request: the line did not end within \(limits.requestTimeout / 1_000_000_000) s"), id: .null))
                _ = try? c.socket.flush()
            }
            close(id)
        }
        closures.report(now: now, log: log, limits: limits, connectionCap: connectionCap)
        if held.burstIsOver() { Memory.releaseFreePages() }
    }

    // MARK: Closing

    func close(_ id: UInt32) {
        guard let c = connections.removeValue(forKey: id) else { return }
        held.change(from: c.held, to: 0)
        try? loop.unregister(c.socket.descriptor)
    }

    /// Closes every connection (the listener closes with this object), and writes the closures
    /// and refusals that a rate-limited line still held back.
    func closeAll() {
        for id in Array(connections.keys) { close(id) }
        closures.flush(log: log, limits: limits, connectionCap: connectionCap)
    }
}
