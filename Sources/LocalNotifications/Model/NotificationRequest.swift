// A request: an identifier, content, a trigger and what to do with missed fires.

/// A notification to deliver when its trigger fires (Apple's `UNNotificationRequest`). Adding a
/// request with the identifier of a pending one replaces it, atomically.
public struct NotificationRequest: Hashable, Sendable {
    public var identifier: String
    public var content: NotificationContent
    public var trigger: NotificationTrigger
    public var missedFirePolicy: MissedFirePolicy

    public init(identifier: String, content: NotificationContent, trigger: NotificationTrigger,
                missedFirePolicy: MissedFirePolicy = .default) {
        self.identifier = identifier; self.content = content; self.trigger = trigger
        self.missedFirePolicy = missedFirePolicy
    }
}

/// Apple's reserved action identifiers, and Fencepost's snooze.
public enum ActionIdentifier {
    /// The user opened the notification: on the board, a short press of the button (acknowledge).
    public static let `default` = "default"
    /// The user dismissed it.
    public static let dismiss = "dismiss"
    /// Deliver again later: a long press of the button. A category may set its own delay with an
    /// action of this identifier; otherwise ``NotificationAction/defaultSnoozeSeconds``.
    public static let snooze = "snooze"
}

/// A button of a category (Apple's `UNNotificationAction`). An action with `snoozeSeconds` schedules
/// the same content again that many seconds after the response.
public struct NotificationAction: Hashable, Sendable {
    public var identifier: String
    public var title: String
    public var snoozeSeconds: Int64?
    /// Apple's `.destructive`: shown in red on a phone; on the board, a hint for the CLI.
    public var destructive: Bool

    /// Apple's snooze, nine minutes.
    public static let defaultSnoozeSeconds: Int64 = 540

    public init(identifier: String, title: String, snoozeSeconds: Int64? = nil, destructive: Bool = false) {
        self.identifier = identifier; self.title = title; self.snoozeSeconds = snoozeSeconds; self.destructive = destructive
    }
}

/// A set of actions that answer notifications of one kind (Apple's `UNNotificationCategory`).
public struct NotificationCategory: Hashable, Sendable {
    public var identifier: String
    public var actions: [NotificationAction]

    public init(identifier: String, actions: [NotificationAction]) {
        self.identifier = identifier; self.actions = actions
    }

    /// The action `identifier`, if this category has it.
    public func action(_ identifier: String) -> NotificationAction? { actions.first { $0.identifier == identifier } }
}
