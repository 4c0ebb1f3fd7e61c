// What the command line says before ArgumentParser reads it: two rules it does not keep itself.
//
// - A repeated option that is not a list is refused, naming it (ArgumentParser keeps the last
//   value silently: `--weekday mon --weekday fri` meant Friday only).
// - A negative number is a number: `--day -1` becomes `--day=-1` (ArgumentParser reads `-1` as an
//   option and reports a missing value). Positional numbers (`zones near -29.3 27.5`) are read by
//   their command from unparsed arguments (see ZonesCommand.Near).
// Arguments after `--` and those of commands that pass their arguments on (`zones build`) are left
// as they are.

enum CommandLineInput {
    /// Options that may be given more than once: each adds to a list.
    /// CommandLineInputTests holds this equal to the options ArgumentParser itself reads as lists
    /// (`fencepost --experimental-dump-help`, `isRepeating`).
    static let repeatable: Set<String> = ["weekday", "hour", "minute", "second", "day", "month", "weekday-ordinal", "exdate", "filter", "nmea-log"]
    /// Subcommand paths whose arguments belong to another parser.
    static let passThrough: [[String]] = [["zones", "build"]]

    /// `-1`, `-29.3`, `-.5`: a negative decimal number.
    static func isNegativeNumber(_ s: String) -> Bool {
        guard s.hasPrefix("-"), s.count > 1 else { return false }
        let rest = s.dropFirst()
        guard let f = rest.first, f.isASCII, f.isNumber || (f == "." && rest.count > 1) else { return false }
        return Double(rest) != nil
    }

    /// The arguments as ArgumentParser should see them, or the message of a usage error.
    static func normalize(_ arguments: [String]) -> Result<[String], UsageMessage> {
        for path in passThrough where arguments.starts(with: path) { return .success(arguments) }
        var out: [String] = []
        var seen: [String: Int] = [:]
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" { out.append(contentsOf: arguments[i...]); break }
            if a.hasPrefix("--"), a.count > 2 {
                let name = String(a.dropFirst(2).prefix { $0 != "=" })
                seen[name, default: 0] += 1
                if seen[name]! == 2 && !repeatable.contains(name) {
                    return .failure(UsageMessage(text: "--\(name) given more than once: it takes one value (give it once)"))
                }
                if !a.contains("="), i + 1 < arguments.count, isNegativeNumber(arguments[i + 1]) {
                    out.append(a + "=" + arguments[i + 1])
                    i += 2
                    continue
                }
            }
            out.append(a)
            i += 1
        }
        return .success(out)
    }

    struct UsageMessage: Error { var text: String }
}
