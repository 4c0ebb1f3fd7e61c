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
    /// Home Assistant's MQTT discovery and entities (`ha`).
    public var homeAssistant = false
}

/// `[fleet]` as written, before `broker` and `device` are required: what the agent reads into a
/// ``FleetConfiguration``, and what `fencepost fleet --config FILE` takes its broker and
/// credentials from (one reader, one set of rules).
public struct FleetSettings: Sendable, Equatable {
    public var broker: MQTTBroker?
    public var device: DeviceID?
    /// Paths resolved against the config file's folder.
    public var ca: String?
    public var certificate: String?
    public var key: String?
    public var username: String?
    public var passwordFile: String?
    public var keepalive: Int
    public var outbox: FleetOutboxBounds
    public var healthInterval: Int
    public var homeAssistant = false

    /// The rules between a broker and the credentials that go with it (those about the broker
    /// only when it is known): the key at fault (a `[fleet]` key name) and why, or nil.
    public static func credentialProblem(broker: MQTTBroker?, ca: String?, certificate: String?, key: String?,
                                         username: String?, passwordFile: String?) -> (key: String, message: String)? {
        if let broker, broker.usesTLS && ca == nil {
            return ("ca", "is needed with an mqtts:// broker (the CA file that signed the broker's certificate)")
        }
        if let broker, !broker.usesTLS && (ca != nil || certificate != nil || key != nil) {
            return (ca != nil ? "ca" : certificate != nil ? "cert" : "key", "needs an mqtts:// broker (TLS); \(broker) is not")
        }
        if (certificate == nil) != (key == nil) { return (certificate == nil ? "cert" : "key", "cert and key go together") }
        if passwordFile != nil && username == nil { return ("password_file", "needs username") }
        return nil
    }

    /// The `[fleet]` section of the config file `path` (`text` its contents): the agent's reader,
    /// with `broker` and `device` optional. Other sections are not read, so a board's own config
    /// serves as well as a file with only `[fleet]`. nil when the file has no `[fleet]`.
    public static func read(configFile path: String, text: String) throws(ConfigError) -> FleetSettings? {
        let top = try ConfigSection.parse(text)
        guard let section = try top.section("fleet") else { return nil }
        return try AgentConfigurationParser(path: path).readFleetSettings(section)
    }
}

extension AgentConfigurationParser {
    /// Every `[fleet]` key's type and range, paths resolved, the credential rules
    /// (``FleetSettings/credentialProblem(broker:ca:certificate:key:username:passwordFile:)``);
    /// `broker` and `device` may be absent.
    func readFleetSettings(_ s: ConfigSection) throws(ConfigError) -> FleetSettings {
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
        let homeAssistant = try s.boolean("ha") ?? false
        var broker: MQTTBroker?
        if let brokerValue {
            do { broker = try MQTTBroker(parsing: brokerValue) } catch { throw s.error("broker", error.description) }
        }
        var device: DeviceID?
        if let deviceValue {
            do { device = try DeviceID(deviceValue) } catch { throw s.error("device", error.message) }
        }
        if let p = FleetSettings.credentialProblem(broker: broker, ca: ca, certificate: certificate, key: key,
                                                   username: username, passwordFile: passwordFile) {
            throw s.error(p.key, p.message)
        }
        return FleetSettings(broker: broker, device: device, ca: ca, certificate: certificate, key: key, username: username,
                             passwordFile: passwordFile, keepalive: Int(keepalive),
                             outbox: FleetOutboxBounds(maximumRows: Int(rows), maximumBytes: Int(bytes), window: 16),
                             healthInterval: Int(health), homeAssistant: homeAssistant)
    }

    /// The agent's `[fleet]`: ``readFleetSettings(_:)`` with `broker` and `device` required.
    func readFleet(_ s: ConfigSection) throws(ConfigError) -> FleetConfiguration {
        let f = try readFleetSettings(s)
        let broker = try s.require(f.broker, "broker", "a string: mqtts://host:port, mqtt://host:port or unix:/path")
        let device = try s.require(f.device, "device", "a string: the device id (letters, digits, -; at most 23)")
        return FleetConfiguration(broker: broker, device: device, ca: f.ca, certificate: f.certificate, key: f.key, username: f.username,
                                  passwordFile: f.passwordFile, keepalive: f.keepalive, outbox: f.outbox, healthInterval: f.healthInterval,
                                  homeAssistant: f.homeAssistant)
    }
}
