// Answers to deliveries: the default action (a short press), dismiss, snooze (a long press) and a
// category's own actions.
import CivilTime

extension NotificationEngine {
    /// The identifier of the one-shot request a snooze of `requestIdentifier` schedules.
    /// A snooze of a snooze keeps the one suffix (the id would otherwise grow with each snooze, past
    /// the identifier limit).
    public static func snoozeIdentifier(of requestIdentifier: String) -> String {
        requestIdentifier.hasSuffix("~snooze") ? requestIdentifier : requestIdentifier + "~snooze"
    }

    /// Answers delivery `identifier` with `action`: `default`, `dismiss`, `snooze` or an action of
    /// the content's category. The delivery's signal stops; an action with `snoozeSeconds` (or
    /// `snooze`, nine minutes by default) schedules the same content again as a one-shot interval
    /// request `<id>~snooze`.
    ///
    /// - Throws: `.unknownDelivery`, `.unknownAction` (naming the actions that exist),
    ///   `.alreadyAnswered`.
    public mutating func respond(to identifier: String, action: String, clock: EngineClock) throws(RequestError) -> EngineOutput {
        guard let index = deliveries.items.firstIndex(where: { $0.identifier == identifier }) else {
            throw RequestError(.unknownDelivery, "no delivered notification \"\(identifier)\" (see `fencepost delivered`)")
        }
        let d = deliveries.items[index]
        if let r = d.response {
            throw RequestError(.alreadyAnswered, "delivered notification \"\(identifier)\" was already answered with \"\(r)\"")
        }
        let category = d.content.categoryIdentifier.flatMap { c in categoryList.first { $0.identifier == c } }
        var snooze: Int64? = nil
        switch action {
        case ActionIdentifier.default, ActionIdentifier.dismiss:
            break
        case ActionIdentifier.snooze:
            snooze = category?.action(action)?.snoozeSeconds ?? NotificationAction.defaultSnoozeSeconds
        default:
            guard let a = category?.action(action) else {
                let known = [ActionIdentifier.default, ActionIdentifier.dismiss, ActionIdentifier.snooze]
                    + (category?.actions.map { $0.identifier }.filter { $0 != ActionIdentifier.snooze } ?? [])
                throw RequestError(.unknownAction, "action \"\(action)\" is not one of \(known.joined(separator: ", ")) for delivered notification \"\(identifier)\"")
            }
            snooze = a.snoozeSeconds
        }
        var out = observe(clock)
        let at = trust.wallTrusted ? clock.wall : nil
        deliveries.items[index].response = action
        deliveries.items[index].respondedAt = at
        out.acknowledged.append(identifier)
        out.changes.append(.setResponse(deliveryIdentifier: identifier, action: action, at: at))
        if let seconds = snooze {
            let request = NotificationRequest(
                identifier: Self.snoozeIdentifier(of: d.requestIdentifier), content: d.content,
                trigger: .interval(IntervalTrigger(seconds: seconds, repeats: false)), missedFirePolicy: .coalesce)
            // Internal: the identifier may exceed the user limit by the suffix; no other rule applies.
            let entry = (try? makeEntry(request, generation: nextGeneration, clock: clock))!
            out.append(install(entry, clock: clock))
        }
        fireDue(clock, into: &out)
        return out
    }
}
