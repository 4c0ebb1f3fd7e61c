// Calendar components by name: the vocabulary that JSON requests, the CLI and messages share.

extension CalendarMatch {
    /// Component names, in the order of the type's properties (Foundation's `DateComponents` names).
    public static let componentNames = [
        "year", "month", "day", "hour", "minute", "second", "weekday", "weekdayOrdinal", "weekOfMonth",
        "weekOfYear", "yearForWeekOfYear", "dayOfYear",
    ]

    /// The value of component `name` (nil when unset or not a component).
    public subscript(component name: String) -> Int? {
        switch name {
        case "year": year
        case "month": month
        case "day": day
        case "hour": hour
        case "minute": minute
        case "second": second
        case "weekday": weekday
        case "weekdayOrdinal": weekdayOrdinal
        case "weekOfMonth": weekOfMonth
        case "weekOfYear": weekOfYear
        case "yearForWeekOfYear": yearForWeekOfYear
        case "dayOfYear": dayOfYear
        default: nil
        }
    }

    /// Sets component `name`; false when there is no such component.
    public mutating func setComponent(_ name: String, to value: Int) -> Bool {
        switch name {
        case "year": year = value
        case "month": month = value
        case "day": day = value
        case "hour": hour = value
        case "minute": minute = value
        case "second": second = value
        case "weekday": weekday = value
        case "weekdayOrdinal": weekdayOrdinal = value
        case "weekOfMonth": weekOfMonth = value
        case "weekOfYear": weekOfYear = value
        case "yearForWeekOfYear": yearForWeekOfYear = value
        case "dayOfYear": dayOfYear = value
        default: return false
        }
        return true
    }

    /// The components that are set, in type order, with their names.
    public var setComponents: [(name: String, value: Int)] {
        Self.componentNames.compactMap { name in self[component: name].map { (name, $0) } }
    }

    /// The components that are set, as `name=value` with weekdays and months by name (`Mon`, `Mar`),
    /// for messages.
    public var componentsDescription: String {
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let set = setComponents.map { c -> String in
            // Names a person reads: `Mon`, `Mar` (not weekday=2, month=3).
            if c.name == "weekday", (1...7).contains(c.value) { return weekdays[c.value - 1] }
            if c.name == "month", (1...12).contains(c.value) { return months[c.value - 1] }
            return "\(c.name)=\(c.value)"
        }
        return set.isEmpty ? "(no components)" : set.joined(separator: " ")
    }

    /// Weekday from a number 1…7 (1 = Sunday) or an English name or its first three letters, any
    /// case: `mon`, `Monday`.
    public static func weekday(named text: String) -> Int? {
        if let n = Int(text) { return n }
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        let t = text.lowercased()
        guard t.count >= 3 else { return nil }
        for (k, name) in names.enumerated() where t == name || t == name.prefix(3) { return k + 1 }
        return nil
    }
}
