// The [fleet] section: the link to the fleet's MQTT broker. Absent: no fleet link, libmosquitto
// is never loaded.
import ConfigFile
import Fleet
import FencepostLinux

/// `[fleet]`.
public struct FleetConfiguration: Sendable, Equatable {
    public var broker: MQTTBroker
    public var device: DeviceID
    /// TLS: the fleet's CA file, the device's certificate and key (resolved paths).
    public var ca: String?
    public var certificate: String?
    public var key: String?
    public var username: String?
    /// A file holding the password (its first line).
    public var passwordFile: String?
    /// Seconds.
    public var keepalive: Int
    public var outbox: FleetOutboxBounds
    /// Seconds between health snapshots.
    public var healthInterval: Int

    public static func == (a: FleetConfiguration, b: FleetConfiguration) -> Bool {
        a.broker == b.broker && a.device == b.device && a.ca == b.ca && a.certificate == b.certificate && a.key == b.key
            && a.username == b.username && a.passwordFile == b.passwordFile && a.keepalive == b.keepalive
            && a.outbox == b.outbox && a.healthInterval == b.healthInterval
    }
}

extension AgentConfigurationParser {
    func readFleet(_ s: ConfigSection) throws(ConfigError) -> FleetConfiguration {
        try s.checkKeys(allowed: ConfigurationKeys.names(in: "fleet"))
        // Every value's type first, so that an error names the key at fault before a missing one.
        let brokerValue = try s.string("broker")
        let deviceValue = try s.string("device")
        let ca = try s.string("ca").map(resolve)
        let certificate = try s.string("cert").map(resolve)
        let key = try s.string("key").map(resolve)
        let username = try s.string("username")
        let passwordFile = try s.string("password_file").map(resolve)
        let keepalive = try s.integer("keepalive", in: 5...3600) ?? 60
        let rows = try s.integer("outbox_rows", in: 16...10_000_000) ?? 100_000
        let bytes = try s.integer("outbox_bytes", in: 65_536...(1 << 34)) ?? (64 << 20)
        let health = try s.integer("health_interval", in: 10...86_400) ?? 300
        let brokerText = try s.require(brokerValue, "broker", "a string: mqtts://host:port, mqtt://host:port or unix:/path")
        let broker: MQTTBroker
        do { broker = try MQTTBroker(parsing: brokerText) } catch { throw s.error("broker", error.description) }
        let deviceText = try s.require(deviceValue, "device", "a string: the device id (letters, digits, -; at most 23)")
        let device: DeviceID
        do { device = try DeviceID(deviceText) } catch { throw s.error("device", error.message) }
        if broker.usesTLS && ca == nil { throw s.error("ca", "is needed with an mqtts:// broker (the fleet's CA file)") }
        if !broker.usesTLS && (ca != nil || certificate != nil || key != nil) {
            throw s.error(ca != nil ? "ca" : certificate != nil ? "cert" : "key", "needs an mqtts:// broker (TLS)")
        }
        if (certificate == nil) != (key == nil) { throw s.error(certificate == nil ? "cert" : "key", "cert and key go together") }
        if passwordFile != nil && username == nil { throw s.error("password_file", "needs username") }
        return FleetConfiguration(broker: broker, device: device, ca: ca, certificate: certificate, key: key, username: username,
                                  passwordFile: passwordFile, keepalive: Int(keepalive),
                                  outbox: FleetOutboxBounds(maximumRows: Int(rows), maximumBytes: Int(bytes), window: 16),
                                  healthInterval: Int(health))
    }
}
