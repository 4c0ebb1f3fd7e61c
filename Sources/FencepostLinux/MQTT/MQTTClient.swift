// An MQTT 5 client over libmosquitto 2.0.11, driven by the caller's event loop (one thread).
//
// Size: one wrapper of one libmosquitto object: every method keeps the guards listed below
// against the same private state (the library handle, the connect thread, the watched descriptor).
//
//   caller                                      client
//   start(now)                                  connect on a ThreadJob (name lookup blocks there)
//   epoll: `watcher` says what to watch         job's eventfd → the socket (re-added per connect)
//   readable/writable → handle(…, now)          loop_read / loop_write; callbacks → events
//   at nextTick → tick(now)                     loop_misc (PINGREQ, keepalive), CONNACK deadline,
//                                               backoff retry
//   takeEvents()                                connected / message / published / disconnected …
//
// libmosquitto 2.0.11's sharp edges, and the guard of each:
// - No asynchronous MQTT 5 connect (upstream #1835): the CONNECT properties (Session Expiry) are
//   stored by a `connect_bind_v5` call with keepalive 1, which fails before any I/O
//   (CMosquitto.h); pinned by a test (session present after a reconnect).
// - The name lookup in connect blocks (getaddrinfo, no asynchronous path in the client): the
//   whole connect call runs on a ``ThreadJob``; the loop does not touch the library object until
//   the job has ended.
// - The TCP connect has no timeout of its own (an unroutable broker: minutes of SYN retries):
//   the client's own deadline (`connectTimeout`) from the start of an attempt to the CONNACK.
// - A TLS handshake can spin an external loop (#3745): ``HandshakeWriteGate``.
// - The library's outgoing queue is memory-only and unbounded: publishing needs an accepted
//   connection (else `.notConnected`); the caller keeps its own bounded queue (the fleet outbox)
//   and hands the library a window.
// - A failed TLS handshake is only MOSQ_ERR_TLS ("A TLS error occurred"): the library takes
//   OpenSSL's reason off OpenSSL's error queue to log it, so ERR_get_error afterwards finds
//   nothing. The client keeps the library's latest error line (``MQTTEventSink/lastError``) and
//   names OpenSSL's reason and the CA file in the disconnect reason (``failure(_:errno:)``);
//   the retry follows the backoff like any failure (1 s doubling to 60 s, jittered).
// - The library closes the socket on a failed read/write/keepalive: the caller is told to
//   forget the descriptor (``MQTTWatch/forget(_:)``), never to remove a number that may be reused.
// - Its keepalive lives in `loop_misc`, with its own clock in whole seconds and no way to ask when
//   the next PINGREQ is due: ``nextTick`` over-estimates the library's last packet in and out (the
//   time after each call that may read or write), so a tick at that + keepalive + 1 s always finds
//   the PINGREQ due. An idle link wakes the caller twice a keepalive (the PINGREQ, its PINGRESP),
//   never once a second.
import CivilTime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// One MQTT connection, kept up across failures with backoff. Not thread-safe: one thread owns it.
///
///     let client = try MQTTClient(options)
///     client.watcher = { change in … epoll add/modify/remove, or forget … }
///     client.start(now: now)
///     // loop: readable/writable → client.handle(readable:writable:now:); at client.nextTick → client.tick(now:)
///     for event in client.takeEvents() { … }
///
/// Stored properties: the library object with its callbacks' sink, the connect thread, the
/// backoff and the handshake gate, and the connection's state: each is one guard of the list at
/// the top, and they change together at every transition.
public final class MQTTClient {
    public let options: MQTTOptions
    /// Told whenever what the caller must watch changes.
    public var watcher: (MQTTWatch) -> Void = { _ in }
    /// The library's log lines (level: MOSQ_LOG_* bits, text), when set.
    public var libraryLog: ((Int32, String) -> Void)? {
        get { sink.log }
        set { sink.log = newValue }
    }

    public private(set) var state: MQTTConnectionState = .idle
    /// Connections accepted (CONNACK) since the client was made.
    public private(set) var connections = 0
    /// The CONNACK deadline or the next retry, nanoseconds (boottime), when one is set.
    public private(set) var deadline: UInt64?

    private let handle: OpaquePointer
    private let sink = MQTTEventSink()
    private var sinkReference: Unmanaged<MQTTEventSink>
    private var job: ThreadJob<Void, MQTTError>?
    private var backoff: ReconnectBackoff
    private var gate = HandshakeWriteGate()
    /// What the caller was told to watch.
    private var watched: (descriptor: FileDescriptor, interest: Interest)?
    /// Set by ``stop(sendWill:)``: the end of the connection is wanted, not retried.
    private var stopping = false
    private var events: [MQTTEvent] = []
    /// The `now` of the latest call (boottime nanoseconds).
    private var lastNow: UInt64 = 0
    /// The current attempt's deadline passed while its connect thread was still busy (reported).
    private var attemptOverdue = false
    /// Set while the client itself ends a connection: the library's disconnect callback is then
    /// an echo of that decision, not news.
    private var ending = false
    /// After the latest library call that may have read a packet, and that may have written one
    /// (boottime, read after the call: never earlier than the library's own time of that packet).
    private var lastRead: UInt64 = 0
    private var lastWrite: UInt64 = 0
    /// The `now` of the latest ``tick(now:)``.
    private var lastTick: UInt64 = 0

    /// Loads libmosquitto (first use), makes the library object and sets the options (Will, TLS,
    /// credentials, CONNECT properties). No I/O.
    public init(_ options: MQTTOptions) throws(MQTTError) {
        self.options = options
        try LibMosquitto._load().get()
        sinkReference = Unmanaged.passRetained(sink)
        switch LibMosquitto._new(options.clientID, cleanStart: options.cleanStart, sink: sinkReference.toOpaque(),
                                 sendMaximum: options.sendMaximum, receiveMaximum: options.receiveMaximum) {
        case .success(let m): handle = m
        case .failure(let e):
            sinkReference.release()
            throw e
        }
        let seed = options.jitterSeed ?? (SystemClocks.boottimeNow().nanosecondsSinceBoot ^ (UInt64(UInt32(bitPattern: getpid())) << 32))
        backoff = ReconnectBackoff(initial: options.backoffInitial, maximum: options.backoffMaximum, jitterSeed: seed)
        do throws(MQTTError) {
            try configure()
        } catch {
            LibMosquitto._destroy(handle)
            sinkReference.release()
            throw error
        }
    }

    private func configure() throws(MQTTError) {
        if let will = options.will { try LibMosquitto._willSet(handle, will).get() }
        if let tls = options.tls {
            try LibMosquitto._tls(handle, ca: tls.ca, certificate: tls.certificate, key: tls.key).get()
        }
        if let username = options.username {
            try LibMosquitto._credentials(handle, username, options.password).get()
        }
        if options.sessionExpiry > 0 {
            let (host, port) = options.broker.connectArguments
            let rc = LibMosquitto._storeConnectProperties(handle, host: host, port: port, sessionExpiry: options.sessionExpiry)
            guard rc == LibMosquitto.invalid else {
                throw .unexpectedLibrary("mosquitto_connect_bind_v5 with keepalive 1 returned \(rc) (\(LibMosquitto.describe(rc))), not MOSQ_ERR_INVAL: the Session Expiry cannot be stored without connecting")
            }
        }
    }

    deinit {
        if let job {
            // The connect may still run on its thread with the library object (a name lookup):
            // never wait for it, and never free what it uses — the object and its event sink are
            // left to the thread (a leak of a few KB, once, when a client goes mid-connect).
            job.detach()
            return
        }
        LibMosquitto._destroy(handle)
        sinkReference.release()
    }

    // MARK: Driving

    /// Starts connecting (from `.idle`). Later failures retry on their own until ``stop(sendWill:)``.
    public func start(now: UInt64) {
        lastNow = now
        guard state == .idle else { return }
        stopping = false
        beginConnect(now: now)
        sync()
    }

    /// After the loop reported the watched descriptor ready.
    public func handle(readable: Bool, writable: Bool, now: UInt64) {
        lastNow = now
        switch state {
        case .connecting:
            if readable { finishConnect(now: now) }
        case .handshaking, .connected:
            if readable || writable { gate.read() }
            // Before the CONNACK only loop_read drives a TLS handshake: a writable wake reads too.
            if readable || (writable && state == .handshaking) {
                let rc = LibMosquitto._loopRead(handle)
                trafficRead()
                if rc != LibMosquitto.success { lost(code: rc) }
            }
            if writable, LibMosquitto._socket(handle) != nil {
                gate.wrote()
                let rc = LibMosquitto._loopWrite(handle)
                trafficWritten()
                if rc != LibMosquitto.success { lost(code: rc) }
            }
            absorb()
        case .idle, .waiting:
            break
        }
        sync()
    }

    /// Once a second at least: keepalive (PINGREQ; a dead link is noticed after about two
    /// keepalives), the CONNACK deadline, the retry after the backoff.
    public func tick(now: UInt64) {
        lastNow = now
        lastTick = now
        switch state {
        case .connecting:
            if let deadline, now >= deadline, !attemptOverdue {
                // The thread stays blocked in the name lookup; its end abandons the attempt.
                attemptOverdue = true
                events.append(.disconnected(reason: "no answer from \(options.broker) within \(options.connectTimeout / 1_000_000_000) s (name lookup or TCP connect)"))
            }
        case .handshaking:
            if let deadline, now >= deadline {
                abandon(reason: "no CONNACK from \(options.broker) within \(options.connectTimeout / 1_000_000_000) s")
            } else {
                // Drives a TLS handshake that the write gate held back.
                var rc = LibMosquitto._loopRead(handle)
                trafficRead()
                if rc == LibMosquitto.success, LibMosquitto._socket(handle) != nil, LibMosquitto._wantWrite(handle) {
                    rc = LibMosquitto._loopWrite(handle)
                    trafficWritten()
                }
                if rc != LibMosquitto.success { lost(code: rc) }
                absorb()
            }
        case .connected:
            let rc = LibMosquitto._loopMisc(handle)   // a PINGREQ it sends is written at once
            trafficWritten()
            if rc != LibMosquitto.success { lost(code: rc) }
            absorb()
        case .waiting:
            if let deadline, now >= deadline { beginConnect(now: now) }
        case .idle:
            break
        }
        sync()
    }

    /// When ``tick(now:)`` is next needed (boottime nanoseconds), nil when never: the CONNACK
    /// deadline or the retry; once a second during a TLS handshake (the write gate leaves its
    /// remainder to the tick); once connected, when the keepalive's PINGREQ is surely due — the
    /// older of the last read and write + keepalive + 1 s (the library counts whole seconds) —
    /// and at most once a second while the library has not sent it (a PINGRESP pending).
    public var nextTick: UInt64? {
        switch state {
        case .idle: return nil
        case .connecting: return attemptOverdue ? nil : deadline   // overdue: the thread's end wakes the caller
        case .waiting: return deadline
        case .handshaking: return min(deadline ?? .max, lastTick + 1_000_000_000)
        case .connected:
            guard options.keepalive > 0 else { return nil }
            let due = min(lastRead, lastWrite) + UInt64(options.keepalive) * 1_000_000_000 + 1_000_000_000
            return max(due, lastTick + 1_000_000_000)
        }
    }

    /// The events since the last call, oldest first.
    public func takeEvents() -> [MQTTEvent] {
        absorb()
        let taken = events
        events.removeAll(keepingCapacity: true)
        return taken
    }

    /// What the caller should watch now (the same as the last ``watcher`` call said).
    public var currentWatch: (FileDescriptor, Interest)? { watched.map { ($0.descriptor, $0.interest) } }

    /// Whether events wait to be taken.
    public var hasEvents: Bool { !events.isEmpty || !sink.events.isEmpty }

    /// Replaces the Will for the next connect (MQTT sends it in CONNECT): e.g. the status Will
    /// with the next connection's number. Refused while a connect runs on its thread.
    public func setWill(_ will: MQTTWill) throws(MQTTError) {
        guard job == nil else { throw .notConnected }
        try LibMosquitto._willSet(handle, will).get()
    }

    // MARK: Operations (an accepted connection needed)

    /// Publishes; returns the message id (its ``MQTTEvent/published(mid:reason:)`` follows).
    /// `messageExpiry`: MQTT 5 Message Expiry, seconds (0: none).
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool, messageExpiry: UInt32 = 0) throws(MQTTError) -> Int32 {
        guard state == .connected else { throw .notConnected }
        let r = payload.withUnsafeBytes { bytes in
            LibMosquitto._publish(handle, topic: topic, payload: bytes, qos: qos, retain: retain, messageExpiry: messageExpiry)
        }
        trafficWritten()
        sync()
        return try r.get()
    }

    /// Subscribes; returns the message id (its ``MQTTEvent/subscribed(mid:granted:)`` follows).
    public func subscribe(_ filter: String, qos: Int32) throws(MQTTError) -> Int32 {
        guard state == .connected else { throw .notConnected }
        let r = LibMosquitto._subscribe(handle, filter, qos: qos)
        trafficWritten()
        sync()
        return try r.get()
    }

    public func unsubscribe(_ filter: String) throws(MQTTError) -> Int32 {
        guard state == .connected else { throw .notConnected }
        let r = LibMosquitto._unsubscribe(handle, filter)
        trafficWritten()
        sync()
        return try r.get()
    }

    /// Ends the connection and stops retrying: a DISCONNECT (reason 0x04 with `sendWill`: the broker
    /// publishes the Will, e.g. "offline" at an orderly shutdown) written if the socket takes it now.
    public func stop(sendWill: Bool = false) {
        stopping = true
        switch state {
        case .handshaking, .connected:
            _ = LibMosquitto._disconnect(handle, reason: sendWill ? 0x04 : 0)
            if LibMosquitto._socket(handle) != nil, LibMosquitto._wantWrite(handle) { _ = LibMosquitto._loopWrite(handle) }
        case .connecting, .waiting, .idle:
            break
        }
        absorb()
        state = .idle
        deadline = nil
        sync()
    }

    // MARK: Internals

    /// After a call that may have read a packet. A read may also write (the PUBACK of a message,
    /// sent at once): it counts as both.
    private func trafficRead() {
        lastRead = SystemClocks.boottimeNow().nanosecondsSinceBoot
        lastWrite = lastRead
    }

    /// After a call that may have written a packet.
    private func trafficWritten() {
        lastWrite = SystemClocks.boottimeNow().nanosecondsSinceBoot
    }

    /// A MOSQ_ERR_* code in words; for MOSQ_ERR_TLS with OpenSSL's reason (from the library's
    /// error line, e.g. "certificate verify failed") and the files it concerns. Call it only
    /// while no connect thread runs (it reads ``MQTTEventSink/lastError``).
    private func failure(_ code: Int32, errno saved: Int32 = 0) -> String {
        guard code == LibMosquitto.tls else { return LibMosquitto.describe(code, errno: saved) }
        var text = "TLS failed"
        if let line = sink.lastError {
            // "OpenSSL Error[0]: error:1416F086:SSL routines:tls_process_server_certificate:certificate verify failed"
            let reason = line.split(separator: ":").last.map { String($0.drop(while: { $0 == " " })) } ?? line
            text += ": \(reason) (libmosquitto: \(line))"
        } else {
            text += ": \(LibMosquitto.describe(code))"
        }
        if let tls = options.tls {
            text += "; the broker's certificate is checked against the CA file \(tls.ca)"
            if let c = tls.certificate { text += ", this board's is \(c)" }
        }
        return text
    }

    private func beginConnect(now: UInt64) {
        // The library closes its old socket in the connect: stop watching it while it is open.
        if let old = watched {
            watched = nil
            if old.descriptor == LibMosquitto._socket(handle) { watcher(.remove(old.descriptor)) } else { watcher(.forget(old.descriptor)) }
        }
        sink.lastError = nil   // before the thread starts: it may write it
        let m = handle
        let (host, port) = options.broker.connectArguments
        let keepalive = options.keepalive
        do {
            job = try ThreadJob { () throws(MQTTError) -> Void in
                try LibMosquitto._connectAsync(m, host: host, port: port, keepalive: keepalive).get()
            }
            state = .connecting
            attemptOverdue = false
            deadline = now + options.connectTimeout
        } catch {
            // No thread or eventfd to be had: try again after the backoff.
            events.append(.disconnected(reason: "cannot start a connect thread: \(error)"))
            retry()
        }
    }

    private func finishConnect(now: UInt64) {
        guard let job else { return }
        let connectDeadline = deadline
        if let w = watched, w.descriptor == job.descriptor {
            watched = nil
            watcher(.remove(w.descriptor))
        }
        self.job = nil
        switch job.finish() {
        case .success:
            if attemptOverdue || (connectDeadline.map { now >= $0 } ?? false) {
                abandon(reason: attemptOverdue ? nil : "no answer from \(options.broker) within \(options.connectTimeout / 1_000_000_000) s (name lookup or TCP connect)")
                return
            }
            gate.reset()
            state = .handshaking
            deadline = connectDeadline
            if LibMosquitto._socket(handle) == nil {
                events.append(.disconnected(reason: "libmosquitto connected without a socket"))
                retry()
            }
        case .failure(let error):
            if !attemptOverdue {
                var text = "\(error)"
                if case .call(_, let code, _) = error, code == LibMosquitto.tls { text = failure(code) }
                events.append(.disconnected(reason: "cannot connect to \(options.broker): \(text)"))
            }
            retry()
        }
    }

    /// Gives up the current attempt or connection (socket open) and retries after the backoff.
    private func abandon(reason: String?) {
        if let reason { events.append(.disconnected(reason: reason)) }
        // The DISCONNECT closes the socket when written; otherwise the next connect closes it.
        ending = true
        _ = LibMosquitto._disconnect(handle, reason: 0)
        if LibMosquitto._socket(handle) != nil { _ = LibMosquitto._loopWrite(handle) }
        absorb()
        ending = false
        retry()
    }

    /// A loop call failed: the library closed the socket and its disconnect callback said why
    /// (absorbed here). A failure without the callback (the library returned early) is reported here.
    private func lost(code: Int32) {
        let saved = errno
        absorb()
        if !stopping, state == .connected || state == .handshaking {
            events.append(.disconnected(reason: failure(code, errno: saved)))
            ending = true
            if LibMosquitto._socket(handle) != nil { _ = LibMosquitto._disconnect(handle, reason: 0) }
            absorb()
            ending = false
            retry()
        }
    }

    private func retry() {
        state = .waiting
        deadline = lastNow + backoff.nextDelay()
    }

    /// Moves the callbacks' events into `events`, updating the state on CONNACK and disconnect.
    private func absorb() {
        guard !sink.events.isEmpty else { return }
        let raw = sink.events
        sink.events.removeAll(keepingCapacity: true)
        for e in raw {
            switch e {
            case .connack(let reason, let sessionPresent):
                if reason == 0 {
                    state = .connected
                    deadline = nil
                    connections += 1
                    backoff.reset()
                    events.append(.connected(sessionPresent: sessionPresent))
                } else {
                    events.append(.refused(reason: reason, message: LibMosquitto.reason(reason)))
                }
            case .connectionLost(let code):
                if stopping || ending { break }
                let text = code == LibMosquitto.keepalive
                    ? "no answer from the broker within the keepalive (\(options.keepalive) s)"
                    : code > 0 && code < 32 ? failure(code) : LibMosquitto.reason(code)
                events.append(.disconnected(reason: text))
                if state == .connected || state == .handshaking { retry() }
            case .published(let mid, let reason):
                events.append(.published(mid: mid, reason: reason))
            case .message(let m):
                events.append(.message(m))
            case .subscribed(let mid, let granted):
                events.append(.subscribed(mid: mid, granted: granted))
            }
        }
    }

    /// Tells the watcher what to watch now.
    private func sync() {
        var want: (FileDescriptor, Interest)?
        switch state {
        case .connecting:
            if let job { want = (job.descriptor, .readable) }
        case .handshaking, .connected:
            if let fd = LibMosquitto._socket(handle) {
                var interest: Interest = .readable
                if gate.allowsWritable(wantWrite: LibMosquitto._wantWrite(handle), connected: state == .connected) { interest.insert(.writable) }
                want = (fd, interest)
            }
        case .idle, .waiting:
            break
        }
        if let old = watched {
            if let want, want.0 == old.descriptor {
                if want.1 != old.interest {
                    watched = (want.0, want.1)
                    watcher(.modify(want.0, want.1))
                }
                return
            }
            // The old one: the connect thread's eventfd or a socket still open (remove), or a
            // socket the library has closed (forget).
            watched = nil
            if old.descriptor == job?.descriptor || old.descriptor == LibMosquitto._socket(handle) {
                watcher(.remove(old.descriptor))
            } else {
                watcher(.forget(old.descriptor))
            }
        }
        if let want {
            watched = (want.0, want.1)
            watcher(.add(want.0, want.1))
        }
    }
}

/// What the library's callbacks said, before the client interprets it.
enum MQTTRawEvent {
    case connack(reason: Int32, sessionPresent: Bool)
    case connectionLost(code: Int32)
    case published(mid: Int32, reason: Int32)
    case message(MQTTMessage)
    case subscribed(mid: Int32, granted: [Int32])
}
