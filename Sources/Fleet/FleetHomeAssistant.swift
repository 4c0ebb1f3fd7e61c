// Home Assistant's MQTT discovery for one board (`ha = true` in [fleet]), pure: the topics and the
// payloads. The shapes follow HA's MQTT integration documentation (device-based discovery):
//
//   homeassistant/device/fencepost/<device>/config    ← the board, not retained, at each connect
//                                                       and when homeassistant/status says online
//   {"dev":{…},"o":{"name":"fencepost",…},"availability":[{"topic":D/status,…}],"qos":1,
//    "cmps":{"position":{"p":"device_tracker",…},"alerts":{"p":"event",…},
//            "acknowledge":{"p":"button",…},"snooze":{"p":"button",…},"outbox":{"p":"sensor",…}}}
//
// The discovery topic has `fencepost` as its node id and the device id as its object id, so the
// broker's ACL names the device as a whole level (`%u`). Under D = fencepost/v1/dev/<device>:
//
//   D/status    availability: the board's own status and Will ({"online":true|false,…}), read
//               through a value_template; nothing new is published for it
//   D/health    the outbox sensor: `outbox.depth` of the health snapshot (every health_interval)
//   D/ha/pos    ↑ retained   {"latitude":…,"longitude":…,"gps_accuracy":…} (the device tracker's
//                            attributes: HA places the tracker from them)
//   D/ha/event  ↑            {"event_type":"delivery"|"response",…} one per delivery and answer
//   D/ha/cmd    ↓            a button's press: `ack` or `snooze`, answering the alert the board
//                            signals (what its own button answers)
import FencepostJSON

public struct HomeAssistantDiscovery: Hashable, Sendable {
    /// HA's birth and last-will topic: `online` asks every device to publish its discovery again.
    public static let statusTopic = "homeassistant/status"
    public static let online = "online"

    public let topics: FleetTopics

    public init(topics: FleetTopics) { self.topics = topics }

    public var configTopic: String { "homeassistant/device/fencepost/" + topics.device.text + "/config" }
    public var positionTopic: String { topics.root + "/ha/pos" }
    public var eventTopic: String { topics.root + "/ha/event" }
    public var commandTopic: String { topics.root + "/ha/cmd" }

    /// What the board subscribes to for HA: the buttons' topic (its own subtree) and HA's status.
    public var subscriptions: [String] { [commandTopic, Self.statusTopic] }

    /// The availability template: the status document's `online` member as HA's words.
    public static let availabilityTemplate = "{{ 'online' if value_json.online else 'offline' }}"

    /// A button of the device.
    public enum Press: String, Hashable, Sendable, CaseIterable {
        case acknowledge = "ack"
        case snooze
    }

    /// The press a payload on ``commandTopic`` stands for; nil for anything else.
    public static func press(_ payload: [UInt8]) -> Press? {
        Press(rawValue: String(decoding: payload, as: UTF8.self))
    }

    /// The event types of the event entity.
    public static let eventTypes = ["delivery", "response"]

    /// The device's discovery document (`agent`: the agent's name and version).
    public func discovery(agent: String) -> [UInt8] {
        let device = topics.device.text
        let id = "fencepost_" + device
        func component(_ key: String, _ platform: String, _ name: String, _ members: [(key: String, value: JSONValue)]) -> (key: String, value: JSONValue) {
            (key, .object([("p", .string(platform)), ("unique_id", .string(id + "_" + key)), ("name", .string(name))] + members))
        }
        let components: [(key: String, value: JSONValue)] = [
            component("position", "device_tracker", "Position", [
                ("json_attributes_topic", .string(positionTopic)), ("source_type", "gps"),
            ]),
            component("alerts", "event", "Alerts", [
                ("state_topic", .string(eventTopic)), ("event_types", .array(Self.eventTypes.map { .string($0) })),
            ]),
            component(Press.acknowledge.rawValue, "button", "Acknowledge", [
                ("command_topic", .string(commandTopic)), ("payload_press", .string(Press.acknowledge.rawValue)),
            ]),
            component(Press.snooze.rawValue, "button", "Snooze", [
                ("command_topic", .string(commandTopic)), ("payload_press", .string(Press.snooze.rawValue)),
            ]),
            component("outbox", "sensor", "Outbox", [
                ("state_topic", .string(topics.health)), ("value_template", "{{ value_json.outbox.depth }}"),
                ("unit_of_measurement", "events"), ("state_class", "measurement"), ("entity_category", "diagnostic"),
            ]),
        ]
        return bytes(.object([
            ("dev", .object([("ids", .array([.string(id)])), ("name", .string(device)), ("mf", "Fencepost"), ("mdl", .string(agent))])),
            ("o", .object([("name", "fencepost"), ("sw", .string(agent))])),
            ("availability", .array([.object([("topic", .string(topics.status)), ("value_template", .string(Self.availabilityTemplate)),
                                              ("payload_available", "online"), ("payload_not_available", "offline")])])),
            ("qos", 1),
            ("cmps", .object(components)),
        ]))
    }

    /// The device tracker's attributes: where the board is.
    public static func position(latitude: Double, longitude: Double, accuracy: Double?) -> [UInt8] {
        var m: [(key: String, value: JSONValue)] = [("latitude", .number(latitude)), ("longitude", .number(longitude))]
        if let accuracy { m.append(("gps_accuracy", .number((accuracy * 10).rounded() / 10))) }
        return bytes(.object(m))
    }

    /// The event entity's payload for an outbox event (its members after `type`): `delivery` or
    /// `response`, with the event's members as attributes; nil for other events (transitions, gaps).
    public static func event(_ e: FleetEvent) -> [UInt8]? {
        guard eventTypes.contains(e.type) else { return nil }
        return bytes(.object([("event_type", .string(e.type))] + e.members.filter { $0.key != "type" }))
    }
}
