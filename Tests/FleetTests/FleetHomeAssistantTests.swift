import FencepostJSON
import FencepostLinux
import FencepostTestSupport
import Fleet
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Home Assistant's MQTT discovery (`ha = true`): the document checked against the shapes HA's MQTT
/// integration documents (device-based discovery: `dev` and `o` at the root, `cmps` of components
/// each with `p` and `unique_id`, each platform's required keys), its topics against those the
/// board publishes and subscribes to, its templates rendered by Jinja2 (HA's template engine)
/// against the board's real payloads; then a real agent behind the documented ACL: discovery at
/// connect and on HA's birth, a delivery as an event, a button press that answers it.
@Suite(.serialized, .processes) struct FleetHomeAssistantTests {
    static let second: UInt64 = 1_000_000_000

    /// HA's required keys per platform (its MQTT docs' "required" options; for the device tracker
    /// a state topic or the attributes topic that carries latitude and longitude).
    static let required: [String: [[String]]] = [
        "device_tracker": [["state_topic", "json_attributes_topic"]],
        "event": [["state_topic"], ["event_types"]],
        "button": [["command_topic"]],
        "sensor": [["state_topic"]],
    ]

    /// What is wrong with a device-based discovery document, given the topics the board publishes
    /// to and those it subscribes to.
    static func problems(_ doc: JSONValue, publishes: Set<String>, subscribes: Set<String>) -> [String] {
        var out: [String] = []
        guard let dev = doc["dev"] ?? doc["device"], let ids = dev["ids"] ?? dev["identifiers"] else { return ["no dev.ids"] }
        if (ids.array?.isEmpty ?? (ids.string?.isEmpty ?? true)) { out.append("dev.ids is empty") }
        if dev["name"]?.string == nil { out.append("dev.name missing") }
        guard let origin = doc["o"] ?? doc["origin"], origin["name"]?.string?.isEmpty == false else { return out + ["o.name missing (required for device discovery)"] }
        guard let cmps = (doc["cmps"] ?? doc["components"])?.object, !cmps.isEmpty else { return out + ["no cmps"] }
        for a in doc["availability"]?.array ?? [] {
            guard let t = a["topic"]?.string else { out.append("availability without topic"); continue }
            if !publishes.contains(t) { out.append("availability topic \(t) is not one the board publishes to") }
        }
        if doc["availability"] == nil { out.append("no availability") }
        var uniqueIDs: Set<String> = []
        for (key, c) in cmps {
            guard let p = (c["p"] ?? c["platform"])?.string else { out.append("\(key): no p"); continue }
            guard let required = Self.required[p] else { out.append("\(key): platform \(p) not expected"); continue }
            guard let uid = c["unique_id"]?.string else { out.append("\(key): no unique_id (required in device discovery)"); continue }
            if !uniqueIDs.insert(uid).inserted { out.append("\(key): unique_id \(uid) twice") }
            for alternatives in required where !alternatives.contains(where: { c[$0] != nil }) {
                out.append("\(key) (\(p)): none of \(alternatives) given")
            }
            for k in ["state_topic", "json_attributes_topic"] {
                if let t = c[k]?.string, !publishes.contains(t) { out.append("\(key).\(k) \(t) is not a topic the board publishes to") }
            }
            if let t = c["command_topic"]?.string, !subscribes.contains(t) { out.append("\(key).command_topic \(t) is not one the board subscribes to") }
            if p == "event", c["event_types"]?.array?.isEmpty != false { out.append("\(key): event_types empty") }
        }
        return out
    }

    /// Renders a Jinja2 template with `value_json` (HA's variable), through python3's jinja2; nil
    /// (the test skips that check, saying so) when jinja2 is not installed.
    static func render(_ template: String, valueJSON: String) throws -> String? {
        guard let python = FaultProxy.python else { return nil }
        let script = "import sys, json, jinja2\nprint(jinja2.Template(sys.argv[1]).render(value_json=json.loads(sys.argv[2])), end='')"
        let out = try FleetTools.run([python, "-c", script, template, valueJSON])
        if out.status != 0 && out.output.contains("No module named 'jinja2'") {
            if TestInputs.required { Issue.record("python3's jinja2 is missing (pip install jinja2)") }
            else { print("jinja2 is not installed: the templates are not rendered (pip install jinja2)") }
            return nil
        }
        return out.status == 0 ? out.output : "error: \(out.output)"
    }

    @Test func theDiscoveryDocumentHasTheDocumentedShape() throws {
        let topics = FleetTopics(device: try DeviceID("van-1"))
        let ha = HomeAssistantDiscovery(topics: topics)
        let doc = try JSONValue.parse(ha.discovery(agent: "fencepost-agent"))
        let publishes: Set<String> = [topics.status, topics.health, ha.positionTopic, ha.eventTopic]
        let subscribes = Set(topics.subscriptions + ha.subscriptions)
        #expect(Self.problems(doc, publishes: publishes, subscribes: subscribes) == [], "\(doc.serialized())")
        #expect(ha.configTopic == "homeassistant/device/fencepost/van-1/config")
        #expect(ha.subscriptions.allSatisfy { $0.hasPrefix(topics.root + "/") || $0 == "homeassistant/status" })
        let platforms = (doc["cmps"]?.object ?? []).compactMap { $0.value["p"]?.string }.sorted()
        #expect(platforms == ["button", "button", "device_tracker", "event", "sensor"])
        // The checker catches what it should.
        var broken = doc.object ?? []
        if let i = broken.firstIndex(where: { $0.key == "o" }) { broken.remove(at: i) }
        #expect(!Self.problems(.object(broken), publishes: publishes, subscribes: subscribes).isEmpty)
        #expect(Self.problems(doc, publishes: [topics.status], subscribes: subscribes).contains { $0.contains("ha/event") })
        #expect(Self.problems(doc, publishes: publishes, subscribes: []).contains { $0.contains("command_topic") })

        // Availability: the board's own status and Will, rendered as HA renders them.
        let availability = try #require(doc["availability"]?[0])
        let template = try #require(availability["value_template"]?.string)
        let online = String(decoding: FleetStatus.online(bdSeq: 3, since: .init(secondsSinceEpoch: 1_800_000_000), agent: "a", boot: "b"), as: UTF8.self)
        let offline = String(decoding: FleetStatus.offline(bdSeq: 3), as: UTF8.self)
        if let up = try Self.render(template, valueJSON: online), let down = try Self.render(template, valueJSON: offline) {
            #expect(up == availability["payload_available"]?.string && up == "online", "\(up)")
            #expect(down == availability["payload_not_available"]?.string && down == "offline", "\(down)")
            // The outbox sensor reads the health snapshot.
            var h = FleetHealth(at: .init(secondsSinceEpoch: 1_800_000_000), clock: .gnss, pending: 1, outboxDepth: 17, outboxBytes: 900, connections: 1)
            h.fixError = 4
            let sensor = try #require(doc["cmps"]?["outbox"])
            #expect(try Self.render(sensor["value_template"]?.string ?? "", valueJSON: String(decoding: h.payload, as: UTF8.self)) == "17")
        }

        // The tracker's attributes and the event's payload.
        let pos = try JSONValue.parse(HomeAssistantDiscovery.position(latitude: 48.87, longitude: 2.35, accuracy: 6.04))
        #expect(pos["latitude"]?.double == 48.87 && pos["longitude"]?.double == 2.35 && pos["gps_accuracy"]?.double == 6.0)
        let delivery = FleetEvent.delivery(id: "d/1/1", request: "d", category: nil, at: .init(secondsSinceEpoch: 1_800_000_000), clock: .gnss,
                                           trigger: .object([("kind", "time")]), outcome: "delivered", position: nil)
        let event = try JSONValue.parse(try #require(HomeAssistantDiscovery.event(delivery)))
        #expect(event["event_type"]?.string == "delivery" && event["delivery"]?.string == "d/1/1")
        #expect(doc["cmps"]?["alerts"]?["event_types"]?.array?.contains(.string("delivery")) == true)
        let transition = FleetEvent.transition(region: "z", event: "enter", at: .init(secondsSinceEpoch: 1), clock: .gnss, position: nil)
        #expect(HomeAssistantDiscovery.event(transition) == nil)
        #expect(HomeAssistantDiscovery.press(Array("ack".utf8)) == .acknowledge && HomeAssistantDiscovery.press(Array("PRESS".utf8)) == nil)
    }

    /// A real agent with `ha = true`, logged in as its device behind the documented ACL, and Home
    /// Assistant played by a session logged in as `homeassistant`.
    @Test func anAgentIsDiscoveredAndItsAlertAnsweredFromHomeAssistant() throws {
        guard FleetTools.all(), FleetAgentTests.ready else { return }
        let broker = try MosquittoBroker(.init(passwords: ["van-1": "van-secret", "homeassistant": "ha-secret"]))
        defer { broker.stop() }
        let port = try #require(broker.passwordPort)
        let agent = try FleetAgent(broker: broker)
        let passwordFile = agent.dir.appendingPathComponent("password").path
        try "van-secret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        agent.brokerAddress = "mqtt://127.0.0.1:\(port)"
        agent.extraFleet = "username = \"van-1\"\npassword_file = \"\(passwordFile)\"\nha = true\n"

        var o = MQTTOptions(broker: try MQTTBroker(parsing: "mqtt://127.0.0.1:\(port)"), clientID: "homeassistant")
        o.username = "homeassistant"
        o.password = "ha-secret"
        let hass = try MQTTBlockingSession(o)
        try hass.connect(timeout: 5 * Self.second)
        for f in ["homeassistant/device/#", "fencepost/v1/dev/+/status", "fencepost/v1/dev/+/health", "fencepost/v1/dev/+/ha/#"] {
            try hass.subscribe(f, qos: 1, timeout: 5 * Self.second)
        }
        try agent.start()
        defer { agent.stop() }
        let configTopic = "homeassistant/device/fencepost/van-1/config"
        var got = collect(hass, seconds: 15) { m in m.contains { $0.topic == configTopic } && m.contains { $0.topic.hasSuffix("/status") } }
        let config = try #require(got.last { $0.topic == configTopic }, "no discovery; agent log:\n\(agent.log)")
        #expect(!config.retain, "discovery is not retained: HA asks for it again when it starts")
        let doc = try JSONValue.parse(config.payload)
        let topics = FleetTopics(device: try DeviceID("van-1"))
        let ha = HomeAssistantDiscovery(topics: topics)
        #expect(Self.problems(doc, publishes: [topics.status, topics.health, ha.positionTopic, ha.eventTopic],
                              subscribes: Set(ha.subscriptions)) == [])
        // The availability topic carries what the template reads.
        let status = try #require(got.last { $0.topic == topics.status })
        if let template = doc["availability"]?[0]?["value_template"]?.string,
           let rendered = try Self.render(template, valueJSON: String(decoding: status.payload, as: UTF8.self)) {
            #expect(rendered == "online", "\(rendered) from \(String(decoding: status.payload, as: UTF8.self))")
        }

        // HA restarts: its birth message asks again.
        try hass.publish(topic: "homeassistant/status", payload: Array("online".utf8), qos: 1, retain: false, timeout: 5 * Self.second)
        got = collect(hass, seconds: 10) { m in m.contains { $0.topic == configTopic } }
        #expect(got.contains { $0.topic == configTopic }, "no discovery after HA's birth; agent log:\n\(agent.log)")

        // A delivery reaches the event entity; the Acknowledge button answers it.
        _ = try agent.control("add", #"{"request":{"id":"check","content":{"title":"Vehicle check"},"trigger":{"interval":{"seconds":0.3}}}}"#)
        got = collect(hass, seconds: 10) { m in m.contains { $0.topic == ha.eventTopic } }
        let delivered = try #require(got.first { $0.topic == ha.eventTopic }.flatMap(json), "no event; agent log:\n\(agent.log)")
        #expect(delivered["event_type"]?.string == "delivery" && delivered["request"]?.string == "check", "\(delivered.serialized())")
        let delivery = try #require(delivered["delivery"]?.string)
        try hass.publish(topic: ha.commandTopic, payload: Array("ack".utf8), qos: 1, retain: false, timeout: 5 * Self.second)
        got = collect(hass, seconds: 10) { m in m.contains { $0.topic == ha.eventTopic } }
        let response = try #require(got.first { $0.topic == ha.eventTopic }.flatMap(json), "no response; agent log:\n\(agent.log)")
        #expect(response["event_type"]?.string == "response" && response["delivery"]?.string == delivery
                && response["source"]?.string == "remote" && response["action"]?.string == "default", "\(response.serialized())")
        let list = try agent.control("delivered")
        let entry = list["result"]?.array?.first { $0["identifier"]?.string == delivery || $0["id"]?.string == delivery }
        #expect(entry != nil && entry?.serialized().contains("default") == true, "\(list.serialized())")
        #expect(!agent.log.contains("refused a subscription"), "the ACL lets the board subscribe: \(agent.log)")
        print("anAgentIsDiscoveredAndItsAlertAnsweredFromHomeAssistant: \(delivery) answered from HA: \(response.serialized())")
    }

    /// The device tracker follows a replayed drive: D/ha/pos is retained, carries the fix, and
    /// changes as the van moves (at most every 10 s).
    @Test func theTrackerFollowsTheFix() throws {
        guard FleetTools.all(), Binaries.agent != nil, AgentProcess.hasFleetLink else { return }
        let broker = try MosquittoBroker(.init())
        let agent = try AgentProcess()
        try agent.writeFleetConfig(fleet: "broker = \"\(broker.address)\"\ndevice = \"van-1\"\nkeepalive = 5\nha = true\n", extra: AgentProcess.demoReplay(speed: 40))
        let hass = try MQTTBlockingSession(MQTTOptions(broker: .unix(path: broker.socketPath), clientID: "hass"))
        try hass.connect(timeout: 5 * Self.second)
        try hass.subscribe("fencepost/v1/dev/van-1/ha/pos", qos: 1, timeout: 5 * Self.second)
        try agent.start(agent: true)
        #expect(agent.waitUntilRunning(), "\(agent.log)")
        let got = collect(hass, seconds: 40) { m in Set(m.map(\.payload)).count >= 2 }
        let positions = got.compactMap(json)
        #expect(Set(got.map(\.payload)).count >= 2, "\(positions.map { $0.serialized() })\nagent log:\n\(agent.log.suffix(2000))")
        for p in positions {
            let lat = p["latitude"]?.double ?? 0, lon = p["longitude"]?.double ?? 0
            #expect(abs(lat - 51.2) < 0.5 && abs(lon - 6.75) < 0.5 && p["gps_accuracy"]?.double != nil, "\(p.serialized())")
        }
        // Retained: Home Assistant starting later sees where the van is.
        let late = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", broker.socketPath, "-t", "fencepost/v1/dev/van-1/ha/pos", "-C", "1", "-W", "2"])
        #expect(late.status == 0 && late.output.contains("latitude"), "\(late)")
        agent.stop()
    }
}
