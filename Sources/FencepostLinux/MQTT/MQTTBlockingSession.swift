// A blocking use of ``MQTTClient`` for a command-line tool: each call runs the client in a
// poll(2) loop until what it waits for has happened or its deadline passed. Not for the agent
// (whose loop must never block): the agent drives the client from its epoll loop.
import CivilTime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// A client driven by blocking calls.
///
///     let session = try MQTTBlockingSession(options)
///     try session.connect(timeout: 10 s)
///     try session.publish(topic: t, payload: p, qos: 1, retain: true, timeout: 10 s)   // waits for the PUBACK
///     let messages = try session.collect(filter: "…/#", for: 2 s)
///     session.close()
public final class MQTTBlockingSession {
    public let client: MQTTClient
    /// Events seen while waiting for something else (messages, PUBACKs of other mids), oldest first.
    public private(set) var pending: [MQTTEvent] = []

    public init(_ options: MQTTOptions) throws(MQTTError) {
        var options = options
        // One attempt at a time is what a tool wants: no automatic retry while waiting.
        options.backoffInitial = max(options.backoffInitial, 1_000_000_000)
        client = try MQTTClient(options)
    }

    /// Connects; throws when refused, failed or not done within `timeout` (nanoseconds).
    /// Returns whether the broker resumed a session.
    @discardableResult
    public func connect(timeout: UInt64) throws(MQTTError) -> Bool {
        let start = Self.now()
        client.start(now: start)
        var result: Bool?
        var failure: MQTTError?
        run(until: start + timeout) { event in
            switch event {
            case .connected(let present): result = present; return true
            case .refused(let reason, let message): failure = .refused(what: "the connection", reason: reason, message: message); return true
            case .disconnected(let why): failure = .disconnected(why); return true
            default: return false
            }
        }
        if let failure { client.stop(); throw failure }
        guard let result else { client.stop(); throw .timedOut("the CONNACK of \(client.options.broker)") }
        return result
    }

    /// Publishes and, for QoS 1, waits for the PUBACK: throws when the broker refuses it (reason ≥ 0x80).
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool, messageExpiry: UInt32 = 0, timeout: UInt64) throws(MQTTError) {
        let mid = try client.publish(topic: topic, payload: payload, qos: qos, retain: retain, messageExpiry: messageExpiry)
        try waitFor(timeout: timeout, what: "the PUBACK of \(topic)") { event in
            if case .published(let m, let reason) = event, m == mid {
                return reason >= 0x80 ? .failure(.refused(what: "the publish to \(topic)", reason: reason, message: LibMosquitto.reason(reason))) : .success(())
            }
            return nil
        }
    }

    /// Subscribes and waits for the SUBACK: throws when refused.
    public func subscribe(_ filter: String, qos: Int32, timeout: UInt64) throws(MQTTError) {
        let mid = try client.subscribe(filter, qos: qos)
        try waitFor(timeout: timeout, what: "the SUBACK of \(filter)") { event in
            if case .subscribed(let m, let granted) = event, m == mid {
                if let g = granted.first, g >= 0x80 { return .failure(.refused(what: "the subscription to \(filter)", reason: g, message: LibMosquitto.reason(g))) }
                return .success(())
            }
            return nil
        }
    }

    /// The messages received within `duration` (nanoseconds), plus those already pending.
    public func messages(for duration: UInt64) -> [MQTTMessage] {
        var out: [MQTTMessage] = []
        let kept = pending
        pending = []
        for e in kept { if case .message(let m) = e { out.append(m) } else { pending.append(e) } }
        run(until: Self.now() + duration) { event in
            if case .message(let m) = event { out.append(m) } else { self.pending.append(event) }
            return false
        }
        return out
    }

    /// Waits for the next message until `deadline` (boottime nanoseconds); nil when none came.
    public func nextMessage(until deadline: UInt64) -> MQTTMessage? {
        if let i = pending.firstIndex(where: { if case .message = $0 { true } else { false } }), case .message(let m) = pending.remove(at: i) {
            return m
        }
        var got: MQTTMessage?
        run(until: deadline) { event in
            if case .message(let m) = event { got = m; return true }
            self.pending.append(event)
            return false
        }
        return got
    }

    /// Sends DISCONNECT (with the Will when `sendWill`) and stops.
    public func close(sendWill: Bool = false) { client.stop(sendWill: sendWill) }

    /// Runs until `check` gives a result for an event (others are kept in ``pending``).
    private func waitFor(timeout: UInt64, what: String, _ check: (MQTTEvent) -> Result<Void, MQTTError>?) throws(MQTTError) {
        var outcome: Result<Void, MQTTError>?
        run(until: Self.now() + timeout) { event in
            if let r = check(event) { outcome = r; return true }
            if case .disconnected(let why) = event { outcome = .failure(.disconnected(why)); return true }
            self.pending.append(event)
            return false
        }
        guard let outcome else { throw .timedOut(what) }
        try outcome.get()
    }

    /// Drives the client with poll(2) until `handle` returns true or `deadline` passes.
    private func run(until deadline: UInt64, _ handle: (MQTTEvent) -> Bool) {
        var watched: (FileDescriptor, Interest)?
        client.watcher = { change in
            switch change {
            case .add(let fd, let interest), .modify(let fd, let interest): watched = (fd, interest)
            case .remove, .forget: watched = nil
            }
        }
        client.tick(now: Self.now())   // brings `watched` up to date
        if let w = client.currentWatch { watched = w }
        var nextTick = Self.now() + 1_000_000_000
        while true {
            for event in client.takeEvents() where handle(event) { return }
            let now = Self.now()
            if now >= deadline { return }
            if now >= nextTick {
                client.tick(now: now)
                nextTick = now + 1_000_000_000
                continue
            }
            let wait = min(deadline, nextTick) - now
            let ms = Int32(min((wait + 999_999) / 1_000_000, 1000))
            if let (fd, interest) = watched {
                var p = pollfd(fd: fd.rawValue, events: 0, revents: 0)
                if interest.contains(.readable) { p.events |= Int16(POLLIN) }
                if interest.contains(.writable) { p.events |= Int16(POLLOUT) }
                let r = poll(&p, 1, ms)
                if r > 0 {
                    let readable = p.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0
                    let writable = p.revents & Int16(POLLOUT) != 0
                    client.handle(readable: readable, writable: writable, now: Self.now())
                }
            } else {
                _ = poll(nil, 0, ms)
            }
        }
    }

    static func now() -> UInt64 { SystemClocks.boottimeNow().nanosecondsSinceBoot }
}
