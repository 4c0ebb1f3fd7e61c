// What a delivery says and how loudly: Apple's `UNMutableNotificationContent` (design §5).

/// How urgently a delivery interrupts (Apple's `UNNotificationInterruptionLevel`), and so what the
/// board does with it: passive = LED only; active = buzzer pattern + LED, LED only in quiet hours;
/// timeSensitive = as active, also in quiet hours; critical = the loud pattern, repeated until
/// acknowledged, also in quiet hours and with the buzzer switched off.
public enum InterruptionLevel: String, Hashable, Sendable, CaseIterable {
    case passive, active, timeSensitive, critical
}

/// The content of a notification.
///
/// Badge, userInfo, category and thread — fields most requests leave empty — live in one shared,
/// immutable box (nil when all are empty): inline they made every content 112 bytes; boxed it is
/// 64, which a million zone requests feel.
public struct NotificationContent: Hashable, Sendable {
    public var title: String
    public var body: String
    /// The buzzer pattern's name (`"default"`, or one configured on the device); nil = silent.
    public var sound: String?
    public var interruptionLevel: InterruptionLevel
    private var extras: Extras?

    /// The rarely set fields. Immutable: a change makes a new box, so copies never share a change.
    final class Extras: Sendable {
        let badge: Int?
        let userInfo: [(key: String, value: String)]
        let categoryIdentifier: String?
        let threadIdentifier: String?

        init(badge: Int?, userInfo: [(key: String, value: String)], categoryIdentifier: String?, threadIdentifier: String?) {
            self.badge = badge; self.userInfo = userInfo
            self.categoryIdentifier = categoryIdentifier; self.threadIdentifier = threadIdentifier
        }

        /// nil when every field is empty.
        static func make(badge: Int?, userInfo: [(key: String, value: String)], categoryIdentifier: String?,
                         threadIdentifier: String?) -> Extras? {
            if badge == nil && userInfo.isEmpty && categoryIdentifier == nil && threadIdentifier == nil { return nil }
            return Extras(badge: badge, userInfo: userInfo, categoryIdentifier: categoryIdentifier, threadIdentifier: threadIdentifier)
        }
    }

    /// The badge number to show, when the request sets one (carried to hooks and the CLI).
    public var badge: Int? {
        get { extras?.badge }
        set { extras = .make(badge: newValue, userInfo: userInfo, categoryIdentifier: categoryIdentifier, threadIdentifier: threadIdentifier) }
    }
    /// Free-form strings carried to the delivery and its hook (Apple's userInfo, as a string map).
    /// Kept in the order given.
    public var userInfo: [(key: String, value: String)] {
        get { extras?.userInfo ?? [] }
        set { extras = .make(badge: badge, userInfo: newValue, categoryIdentifier: categoryIdentifier, threadIdentifier: threadIdentifier) }
    }
    /// The category whose actions answer this notification; must be registered.
    public var categoryIdentifier: String? {
        get { extras?.categoryIdentifier }
        set { extras = .make(badge: badge, userInfo: userInfo, categoryIdentifier: newValue, threadIdentifier: threadIdentifier) }
    }
    /// Groups related deliveries (Apple's threadIdentifier).
    public var threadIdentifier: String? {
        get { extras?.threadIdentifier }
        set { extras = .make(badge: badge, userInfo: userInfo, categoryIdentifier: categoryIdentifier, threadIdentifier: newValue) }
    }

    public init(title: String = "", body: String = "", sound: String? = nil, badge: Int? = nil,
                userInfo: [(key: String, value: String)] = [], categoryIdentifier: String? = nil,
                threadIdentifier: String? = nil, interruptionLevel: InterruptionLevel = .active) {
        self.title = title; self.body = body; self.sound = sound
        self.extras = .make(badge: badge, userInfo: userInfo, categoryIdentifier: categoryIdentifier, threadIdentifier: threadIdentifier)
        self.interruptionLevel = interruptionLevel
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
