import CMosquitto
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// libmosquitto calls in swift-system's layers: internal `_…` functions returning
/// `Result<_, MQTTCallError>`, over one-line shims (CMosquitto) that alone touch the library.
/// Nothing outside this file calls libmosquitto. The library is loaded by ``_load()`` (dlopen).
enum LibMosquitto {
    /// `MOSQ_ERR_*` codes the client acts on.
    static let success: Int32 = 0
    static let invalid: Int32 = 3
    static let noConnection: Int32 = 4
    static let connectionLost: Int32 = 7
    static let tls: Int32 = 8
    static let systemError: Int32 = 14
    static let keepalive: Int32 = 19

    /// Loads the library once; later calls return at once.
    static func _load() -> Result<Void, MQTTError> {
        guard let why = cmq_load() else {
            cmq_set_handler(mqttEventTrampoline)
            return .success(())
        }
        return .failure(.libraryUnavailable(soname: String(cString: cmq_soname()), message: String(cString: why)))
    }

    /// `MOSQ_ERR_*` as text. The corresponding C function is `mosquitto_strerror`.
    static func describe(_ code: Int32, errno saved: Int32 = 0) -> String {
        if code == systemError && saved != 0 { return Errno(rawValue: saved).description }
        return String(cString: cmq_strerror(code))
    }

    /// An MQTT 5 reason code as text. The corresponding C function is `mosquitto_reason_string`.
    static func reason(_ code: Int32) -> String { String(cString: cmq_reason_string(code)) }

    /// `.success`, or the failure of `function` (a MOSQ_ERR_* code; errno's text for MOSQ_ERR_ERRNO).
    static func result(_ function: String, _ rc: Int32) -> Result<Void, MQTTError> {
        if rc == success { return .success(()) }
        let saved = rc == systemError ? errno : 0
        return .failure(.call(function: function, code: rc, message: describe(rc, errno: saved)))
    }

    // MARK: One-line shims

    /// The corresponding C function is `mosquitto_new` (+ MQTT 5, send/receive maxima, callbacks).
    static func _new(_ id: String, cleanStart: Bool, sink: UnsafeMutableRawPointer, sendMaximum: Int32, receiveMaximum: Int32) -> Result<OpaquePointer, MQTTError> {
        guard let m = cmq_new(id, cleanStart, sink, sendMaximum, receiveMaximum) else {
            return .failure(.call(function: "mosquitto_new", code: systemError, message: Errno(rawValue: errno).description))
        }
        return .success(m)
    }
    static func _destroy(_ m: OpaquePointer) { cmq_destroy(m) }
    /// The corresponding C function is `mosquitto_will_set_v5`.
    static func _willSet(_ m: OpaquePointer, _ will: MQTTWill) -> Result<Void, MQTTError> {
        will.payload.withUnsafeBytes { bytes in
            result("mosquitto_will_set_v5", cmq_will_set(m, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain, will.delay, will.messageExpiry))
        }
    }
    /// The corresponding C function is `mosquitto_username_pw_set`.
    static func _credentials(_ m: OpaquePointer, _ username: String, _ password: String?) -> Result<Void, MQTTError> {
        result("mosquitto_username_pw_set", cmq_username_pw_set(m, username, password))
    }
    /// The corresponding C functions are `mosquitto_tls_set` and `mosquitto_tls_opts_set`.
    static func _tls(_ m: OpaquePointer, ca: String, certificate: String?, key: String?) -> Result<Void, MQTTError> {
        result("mosquitto_tls_set", cmq_tls_set(m, ca, certificate, key))
    }
    /// `mosquitto_connect_bind_v5` with keepalive 1: stores the CONNECT properties, no I/O.
    /// `MOSQ_ERR_INVAL` is the expected outcome (see CMosquitto.h).
    static func _storeConnectProperties(_ m: OpaquePointer, host: String, port: Int32, sessionExpiry: UInt32) -> Int32 {
        cmq_store_connect_properties(m, host, port, sessionExpiry)
    }
    /// Blocks for the name lookup; the TCP connect is non-blocking. The corresponding C function is
    /// `mosquitto_connect_bind_async`.
    static func _connectAsync(_ m: OpaquePointer, host: String, port: Int32, keepalive: Int32) -> Result<Void, MQTTError> {
        result("mosquitto_connect_bind_async", cmq_connect_async(m, host, port, keepalive))
    }
    /// The corresponding C function is `mosquitto_disconnect_v5`.
    static func _disconnect(_ m: OpaquePointer, reason: Int32) -> Int32 { cmq_disconnect(m, reason) }
    /// The corresponding C function is `mosquitto_publish_v5`.
    static func _publish(_ m: OpaquePointer, topic: String, payload: UnsafeRawBufferPointer, qos: Int32, retain: Bool, messageExpiry: UInt32) -> Result<Int32, MQTTError> {
        var mid: Int32 = 0
        let rc = cmq_publish(m, &mid, topic, Int32(payload.count), payload.baseAddress, qos, retain, messageExpiry)
        return result("mosquitto_publish_v5", rc).map { mid }
    }
    /// The corresponding C function is `mosquitto_subscribe_v5`.
    static func _subscribe(_ m: OpaquePointer, _ filter: String, qos: Int32) -> Result<Int32, MQTTError> {
        var mid: Int32 = 0
        return result("mosquitto_subscribe_v5", cmq_subscribe(m, &mid, filter, qos)).map { mid }
    }
    /// The corresponding C function is `mosquitto_unsubscribe`.
    static func _unsubscribe(_ m: OpaquePointer, _ filter: String) -> Result<Int32, MQTTError> {
        var mid: Int32 = 0
        return result("mosquitto_unsubscribe", cmq_unsubscribe(m, &mid, filter)).map { mid }
    }
    /// The corresponding C functions are `mosquitto_loop_read`, `_loop_write`, `_loop_misc`.
    static func _loopRead(_ m: OpaquePointer) -> Int32 { cmq_loop_read(m) }
    static func _loopWrite(_ m: OpaquePointer) -> Int32 { cmq_loop_write(m) }
    static func _loopMisc(_ m: OpaquePointer) -> Int32 { cmq_loop_misc(m) }
    /// The socket, or nil when there is none. The corresponding C function is `mosquitto_socket`.
    static func _socket(_ m: OpaquePointer) -> FileDescriptor? {
        let fd = cmq_socket(m)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }
    /// The corresponding C function is `mosquitto_want_write`.
    static func _wantWrite(_ m: OpaquePointer) -> Bool { cmq_want_write(m) }
}

/// Where the library's callbacks land: one C handler for every client (CMosquitto), `obj` is the
/// client's ``MQTTEventSink``. Copies what the library lends for the callback only (topic, payload).
private func mqttEventTrampoline(_ obj: UnsafeMutableRawPointer?, _ event: UnsafePointer<cmq_event>?) {
    guard let obj, let event else { return }
    Unmanaged<MQTTEventSink>.fromOpaque(obj).takeUnretainedValue().receive(event.pointee)
}

/// The events of one client between two drains, copied out of the callbacks.
final class MQTTEventSink {
    var events: [MQTTRawEvent] = []
    /// The library's log lines go here, when set (debug level included).
    var log: ((Int32, String) -> Void)?
    /// The library's latest error line (MOSQ_LOG_ERR), e.g. OpenSSL's reason for a failed TLS
    /// handshake: the library takes it off OpenSSL's error queue to log it, so this is the only
    /// place it can be read afterwards. Written by whichever thread drives the library object
    /// (the connect thread during a connect): read it only when that thread has ended.
    var lastError: String?

    func receive(_ e: cmq_event) {
        switch e.kind {
        case Int32(CMQ_CONNECT.rawValue):
            events.append(.connack(reason: e.code, sessionPresent: e.flags & 1 != 0))
        case Int32(CMQ_DISCONNECT.rawValue):
            events.append(.connectionLost(code: e.code))
        case Int32(CMQ_PUBLISH.rawValue):
            events.append(.published(mid: e.mid, reason: e.code))
        case Int32(CMQ_MESSAGE.rawValue):
            var payload: [UInt8] = []
            if let p = e.payload, e.payload_length > 0 {
                payload = Array(UnsafeRawBufferPointer(start: p, count: Int(e.payload_length)))
            }
            let topic = e.topic.map { String(cString: $0) } ?? ""
            events.append(.message(MQTTMessage(topic: topic, payload: payload, qos: e.qos, retain: e.retain,
                                               messageExpiry: e.has_expiry ? e.expiry : nil)))
        case Int32(CMQ_SUBSCRIBE.rawValue):
            var granted: [Int32] = []
            if let g = e.granted { for i in 0..<Int(e.granted_count) { granted.append(g[i]) } }
            events.append(.subscribed(mid: e.mid, granted: granted))
        case Int32(CMQ_LOG.rawValue):
            guard let text = e.text else { break }
            // MOSQ_LOG_ERR; one line of at most 512 bytes kept.
            if e.level & 0x08 != 0 { lastError = String(String(cString: text).prefix(512)) }
            if let log { log(e.level, String(cString: text)) }
        default:
            break
        }
    }
}
