// What a delivery says and how loudly: Apple's `UNMutableNotificationContent` (design §5).

/// How urgently a delivery interrupts (Apple's `UNNotificationInterruptionLevel`), and so what the
/// board does with it: passive = LED only; active = buzzer pattern + LED, LED only in quiet hours;
/// timeSensitive = as active, also in quiet hours; critical = the loud pattern, repeated until
/// acknowledged, also in quiet hours and with the buzzer switched off.
public enum InterruptionLevel: String, Hashable, Sendable, CaseIterable {
    case passive, active, timeSensitive, critical
}

/// The content of a notification.
public struct NotificationContent: Hashable, Sendable {
    public var title: String
    public var body: String
    /// The buzzer pattern's name (`"default"`, or one configured on the device); nil = silent.
    public var sound: String?
    /// The badge number to show, when the request sets one (carried to hooks and the CLI).
    public var badge: Int?
    /// Free-form strings carried to the delivery and its hook (Apple's userInfo, as a string map).
    /// Kept in the order given.
    public var userInfo: [(key: String, value: String)]
    /// The category whose actions answer this notification; must be registered.
    public var categoryIdentifier: String?
    /// Groups related deliveries (Apple's threadIdentifier).
    public var threadIdentifier: String?
    public var interruptionLevel: InterruptionLevel

    public init(title: String = "", body: String = "", sound: String? = nil, badge: Int? = nil,
                userInfo: [(key: String, value: String)] = [], categoryIdentifier: String? = nil,
                threadIdentifier: String? = nil, interruptionLevel: InterruptionLevel = .active) {
        self.title = title; self.body = body; self.sound = sound; self.badge = badge
        self.userInfo = userInfo; self.categoryIdentifier = categoryIdentifier
        self.threadIdentifier = threadIdentifier; self.interruptionLevel = interruptionLevel
    }

    public static func == (a: NotificationContent, b: NotificationContent) -> Bool {
        a.title == b.title && a.body == b.body && a.sound == b.sound && a.badge == b.badge
            && a.userInfo.elementsEqual(b.userInfo, by: { $0.key == $1.key && $0.value == $1.value })
            && a.categoryIdentifier == b.categoryIdentifier && a.threadIdentifier == b.threadIdentifier
            && a.interruptionLevel == b.interruptionLevel
    }

    public func hash(into h: inout Hasher) {
        h.combine(title); h.combine(body); h.combine(sound); h.combine(badge)
        for (k, v) in userInfo { h.combine(k); h.combine(v) }
        h.combine(categoryIdentifier); h.combine(threadIdentifier); h.combine(interruptionLevel)
    }
}
