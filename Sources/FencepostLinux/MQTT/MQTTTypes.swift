// The values of the MQTT client: where the broker is, how to connect, what happened.

/// Why an MQTT operation failed.
public enum MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libmosquitto (loaded at first use) could not be loaded: not installed, or another version.
    case libraryUnavailable(soname: String, message: String)
    /// A broker address that is not `mqtts://host[:port]`, `mqtt://host[:port]` or `unix:/path`.
    case invalidBroker(String, reason: String)
    /// A library call failed: its name, its MOSQ_ERR_* code, the text.
    case call(function: String, code: Int32, message: String)
    /// The operation needs an accepted connection (CONNACK) and there is none now.
    case notConnected
    /// libmosquitto did not behave as this client relies on (see ``MQTTClient``): what differed.
    case unexpectedLibrary(String)
    /// A blocking operation (``MQTTBlockingSession``) ran out of time: what it waited for.
    case timedOut(String)
    /// The broker refused the connection (CONNACK reason ≥ 0x80) or an operation (reason code).
    case refused(what: String, reason: Int32, message: String)
    /// The connection ended while a blocking operation waited.
    case disconnected(String)

    public var description: String {
        switch self {
        case .libraryUnavailable(let soname, let message):
            return "libmosquitto (\(soname)) cannot be loaded: \(message); install it with `apt-get install libmosquitto1` (board/install-deps)"
        case .invalidBroker(let text, let reason):
            return "broker \"\(text)\": \(reason) (expected mqtts://host:port, mqtt://host:port or unix:/path)"
        case .call(let function, let code, let message):
            return "\(function) failed: \(message) (MOSQ_ERR \(code))"
        case .notConnected:
            return "not connected to the broker"
        case .unexpectedLibrary(let what):
            return "libmosquitto behaves unexpectedly: \(what)"
        case .timedOut(let what):
            return "timed out waiting for \(what)"
        case .refused(let what, let reason, let message):
            return "the broker refused \(what): \(message) (reason \(reason))"
        case .disconnected(let why):
            return "disconnected from the broker: \(why)"
        }
    }
}

/// Where the broker listens.
public enum MQTTBroker: Hashable, Sendable, CustomStringConvertible {
    /// TCP, with TLS when `tls` (mqtts://, default port 8883; mqtt://, 1883).
    case tcp(host: String, port: Int32, tls: Bool)
    /// A Unix socket (`unix:/path`): mosquitto's `listener 0 /path`.
    case unix(path: String)

    /// Parses `mqtts://host[:port]`, `mqtt://host[:port]`, `unix:/path`. IPv6 literals in brackets
    /// (`mqtt://[::1]:1883`).
    public init(parsing text: String) throws(MQTTError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else { throw .invalidBroker(text, reason: "a Unix socket path must be absolute") }
            guard path.utf8.count < 108 else { throw .invalidBroker(text, reason: "a Unix socket path is at most 107 bytes") }
            self = .unix(path: path)
            return
        }
        let tls: Bool
        var rest: Substring
        if text.hasPrefix("mqtts://") { tls = true; rest = text.dropFirst(8) }
        else if text.hasPrefix("mqtt://") { tls = false; rest = text.dropFirst(7) }
        else { throw .invalidBroker(text, reason: "unknown scheme") }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .invalidBroker(text, reason: "no ] after the IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidBroker(text, reason: "text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw .invalidBroker(text, reason: "no host") }
        for c in host.utf8 where c == UInt8(ascii: "/") || c == UInt8(ascii: "@") || c <= 0x20 {
            throw .invalidBroker(text, reason: "the host has a character that is not allowed (/, @ or a space)")
        }
        var port: Int32 = tls ? 8883 : 1883
        if let portText {
            guard let p = Int32(portText), p > 0, p <= 65535 else { throw .invalidBroker(text, reason: "the port is not a number from 1 to 65535") }
            port = p
        }
        self = .tcp(host: String(host), port: port, tls: tls)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port, let tls):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "\(tls ? "mqtts" : "mqtt")://\(shown):\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }

    /// What libmosquitto's connect takes: host (or socket path) and port (0 for a Unix socket).
    var connectArguments: (host: String, port: Int32) {
        switch self {
        case .tcp(let host, let port, _): (host, port)
        case .unix(let path): (path, 0)
        }
    }

    /// Whether a TLS session is needed.
    public var usesTLS: Bool {
        if case .tcp(_, _, let tls) = self { return tls }
        return false
    }
}

/// The Will the broker publishes when the connection ends without a DISCONNECT (or with reason 0x04).
public struct MQTTWill: Hashable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int32
    public var retain: Bool
    /// MQTT 5 Will Delay, seconds: the broker waits this long, and a reconnect within it (with the
    /// session resumed) cancels the Will. 0: none.
    public var delay: UInt32
    /// MQTT 5 Message Expiry of the Will, seconds. 0: none.
    public var messageExpiry: UInt32

    public init(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = true, delay: UInt32 = 0, messageExpiry: UInt32 = 0) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.delay = delay
        self.messageExpiry = messageExpiry
    }
}

/// TLS files: the CA that signed the broker's certificate, and the client's certificate and key.
public struct MQTTTLSFiles: Hashable, Sendable {
    public var ca: String
    public var certificate: String?
    public var key: String?
    public init(ca: String, certificate: String? = nil, key: String? = nil) {
        self.ca = ca
        self.certificate = certificate
        self.key = key
    }
}

/// How a client connects.
public struct MQTTOptions: Hashable, Sendable {
    public var broker: MQTTBroker
    /// The MQTT client id (the fleet's device id).
    public var clientID: String
    /// Seconds between packets before a PINGREQ; a dead link is noticed after about twice this.
    public var keepalive: Int32 = 60
    /// MQTT 5 Session Expiry, seconds: the broker keeps the session (subscriptions, QoS 1 in
    /// flight) this long after the connection ends. 0: a clean session every time.
    public var sessionExpiry: UInt32 = 0
    /// Clean Start on the first CONNECT (later reconnects of the same client resume).
    public var cleanStart: Bool = false
    public var will: MQTTWill?
    public var tls: MQTTTLSFiles?
    public var username: String?
    public var password: String?
    /// QoS 1 messages in flight each way (MQTT 5 Receive Maximum; libmosquitto's default is 20).
    public var sendMaximum: Int32 = 16
    public var receiveMaximum: Int32 = 16
    /// Nanoseconds from starting a connect (name lookup included) to the CONNACK: past it the
    /// attempt is abandoned and retried after the backoff (the library has no timeout of its own).
    public var connectTimeout: UInt64 = 20_000_000_000
    /// Reconnect delays, nanoseconds (equal jitter: each delay is drawn from [d/2, d]).
    public var backoffInitial: UInt64 = 1_000_000_000
    public var backoffMaximum: UInt64 = 60_000_000_000
    /// Seed of the backoff's jitter (tests); nil: from the clock and the pid.
    public var jitterSeed: UInt64?

    public init(broker: MQTTBroker, clientID: String) {
        self.broker = broker
        self.clientID = clientID
    }
}

/// A message received.
public struct MQTTMessage: Hashable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int32
    public var retain: Bool
    /// MQTT 5 Message Expiry left, seconds, when the sender set one.
    public var messageExpiry: UInt32?

    public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool, messageExpiry: UInt32?) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.messageExpiry = messageExpiry
    }
}

/// What the client saw, in order, since the last ``MQTTClient/takeEvents()``.
public enum MQTTEvent: Hashable, Sendable {
    /// CONNACK accepted. `sessionPresent`: the broker resumed the session (subscriptions and
    /// QoS 1 state kept).
    case connected(sessionPresent: Bool)
    /// The connection, or the attempt to make one, ended: why. The client retries after its backoff.
    case disconnected(reason: String)
    /// The broker refused the connection: its CONNACK reason code (≥ 0x80) and text.
    case refused(reason: Int32, message: String)
    /// QoS 1: the PUBACK of `mid`, with its reason code (< 0x80 accepted; 0x10 no subscribers);
    /// QoS 0: written to the socket.
    case published(mid: Int32, reason: Int32)
    case message(MQTTMessage)
    /// SUBACK of `mid`: the granted QoS per filter, or a reason ≥ 0x80 when refused.
    case subscribed(mid: Int32, granted: [Int32])
}

/// Where the client stands.
public enum MQTTConnectionState: Hashable, Sendable {
    /// Not started, or stopped.
    case idle
    /// The name lookup and TCP connect run on a thread of their own.
    case connecting
    /// Socket open, CONNECT (and TLS) under way, no CONNACK yet.
    case handshaking
    /// CONNACK accepted.
    case connected
    /// Waiting before the next attempt.
    case waiting
}

/// A change of what the caller's epoll set must hold for the client.
public enum MQTTWatch: Hashable, Sendable {
    /// Start watching this descriptor.
    case add(FileDescriptor, Interest)
    /// Same descriptor, new interest.
    case modify(FileDescriptor, Interest)
    /// Stop watching: the descriptor is still open (call `epoll_ctl(DEL)`).
    case remove(FileDescriptor)
    /// The library has closed it (epoll has dropped it already): forget it, touch nothing — the
    /// number may belong to another descriptor by now.
    case forget(FileDescriptor)
}
