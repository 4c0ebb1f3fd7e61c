// Home Assistant through the fleet's broker (`ha = true` in [fleet]); the topics and payloads are
// in Fleet/FleetHomeAssistant.swift. The board publishes its discovery document at each connect
// and whenever HA's status says `online` (not retained: HA asks again after its own restart), its
// position when the fix moved (at most every `positionInterval`), and one event per delivery and
// response; a button's press comes in on its own D/ha/cmd and answers the alert the board
// signals, through the control service's `ack` (a `remote` answer, as a fleet command's is).
//
// Bounds: at most `maximumPendingEvents` HA events wait for the end of a loop turn (the oldest
// is dropped past that, and counted); events that happen while the link is down are not kept —
// HA's event entity is live, the outbox (D/evt) keeps the history.
import CivilTime
import Fleet
import FencepostJSON
import FencepostLinux
import LocalNotifications

extension FleetLink {
    static let positionInterval: UInt64 = 10_000_000_000
    static let maximumPendingEvents = 64

    /// At each connect: HA's subscriptions and the discovery document, the position again.
    func homeAssistantConnected(now: UInt64) {
        guard let ha = homeAssistant else { return }
        for t in ha.subscriptions { _ = try? client.subscribe(t, qos: 1) }
        publishDiscovery(ha)
        lastPositionPayload = nil
        nextPosition = now
    }

    func publishDiscovery(_ ha: HomeAssistantDiscovery) {
        publish(ha.configTopic, ha.discovery(agent: Self.agentVersion), retain: false)
        log.debug("fleet: Home Assistant discovery published on \(ha.configTopic)")
    }

    /// Handles HA's topics; false when `m` is not one of them.
    func handleHomeAssistant(_ m: MQTTMessage) -> Bool {
        guard let ha = homeAssistant else { return false }
        if m.topic == HomeAssistantDiscovery.statusTopic {
            if String(decoding: m.payload, as: UTF8.self) == HomeAssistantDiscovery.online { publishDiscovery(ha) }
            return true
        }
        guard m.topic == ha.commandTopic else { return false }
        guard let press = HomeAssistantDiscovery.press(m.payload) else {
            log.warning("fleet: Home Assistant sent \(PrintableText.escaped(String(decoding: m.payload.prefix(40), as: UTF8.self))) on \(ha.commandTopic); the buttons send ack or snooze")
            return true
        }
        guard let delivery = currentAlert() else {
            log.info("fleet: Home Assistant's \(press.rawValue) answers nothing: no alert is waiting")
            return true
        }
        let action = press == .snooze ? ActionIdentifier.snooze : ActionIdentifier.default
        switch callControl("ack", .object([("delivery", .string(delivery)), ("action", .string(action))])) {
        case .success: log.info("fleet: Home Assistant's \(press.rawValue) answers \(delivery) with \(action)")
        case .failure(let e): log.warning("fleet: Home Assistant's \(press.rawValue) on \(delivery): \(e.message)")
        }
        return true
    }

    /// An outbox event, as HA's event entity hears it (deliveries and responses).
    func noteHomeAssistantEvent(_ e: FleetEvent) {
        guard homeAssistant != nil, let payload = HomeAssistantDiscovery.event(e) else { return }
        if pendingHomeAssistantEvents.count >= Self.maximumPendingEvents {
            pendingHomeAssistantEvents.removeFirst()
            droppedHomeAssistantEvents += 1
        }
        pendingHomeAssistantEvents.append(payload)
    }

    /// At the end of a loop turn: the events of the turn (after their transaction committed).
    func flushHomeAssistantEvents() {
        guard let ha = homeAssistant, !pendingHomeAssistantEvents.isEmpty else { return }
        if client.state == .connected {
            for payload in pendingHomeAssistantEvents { publish(ha.eventTopic, payload, retain: false) }
        }
        pendingHomeAssistantEvents.removeAll(keepingCapacity: true)
    }

    /// The position, when the fix moved since the last one published.
    func publishPositionIfDue(now: UInt64) {
        guard let ha = homeAssistant, client.state == .connected, now >= nextPosition else { return }
        nextPosition = now + Self.positionInterval
        guard let p = readPosition() else { return }
        let payload = HomeAssistantDiscovery.position(latitude: p.latitude, longitude: p.longitude, accuracy: p.accuracy)
        guard payload != lastPositionPayload else { return }
        lastPositionPayload = payload
        publish(ha.positionTopic, payload, retain: true)
    }
}
