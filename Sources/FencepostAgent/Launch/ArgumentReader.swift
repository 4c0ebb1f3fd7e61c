// One command's arguments read left to right, the same way for every command both executables
// share (`run`, `check-config`, `pin-test`, `check-algorithms`, `bench`): an option's value
// follows it (`--config FILE`) or is joined to it (`--config=FILE`).

/// Reads a command's arguments; every problem is a ``UsageError`` naming the argument.
struct ArgumentReader {
    private let arguments: [String]
    private var index = 0

    init(_ arguments: [String]) { self.arguments = arguments }

    /// The next argument; `--name=value` comes as `--name`, then its value comes from
    /// ``value(of:example:)``.
    mutating func next() -> String? {
        guard index < arguments.count else { return nil }
        let a = arguments[index]
        if a.hasPrefix("--"), let equals = a.firstIndex(of: "=") {
            pendingValue = String(a[a.index(after: equals)...])
            index += 1
            return String(a[..<equals])
        }
        pendingValue = nil
        index += 1
        return a
    }

    /// A value joined with `=` to the option just read.
    private var pendingValue: String?

    /// The value of `name`, the option just read: joined (`--name=value`) or the next argument.
    /// - Throws: when there is none or it is empty, a message showing `example`.
    mutating func value(of name: String, example: String) throws(UsageError) -> String {
        if let v = pendingValue {
            pendingValue = nil
            guard !v.isEmpty else { throw UsageError("\(name) needs \(example)") }
            return v
        }
        guard index < arguments.count, !arguments[index].isEmpty else { throw UsageError("\(name) needs \(example)") }
        index += 1
        return arguments[index - 1]
    }

    /// The file of `--config`/`-c`, the option just read (every command of the agent takes one).
    mutating func configFile(_ name: String) throws(UsageError) -> String {
        try value(of: name, example: "a file: \(name) /etc/fencepost/fencepost.toml")
    }

    /// Refuses a value joined to a flag (`--console=yes`).
    mutating func flag(_ name: String) throws(UsageError) {
        if pendingValue != nil { throw UsageError("\(name) takes no value") }
    }

    /// The refusal of an argument no option of this command takes. `command` is the agent's
    /// command flag (`--check-config`), nil for running, or the CLI's subcommand name; on the
    /// agent's command line an option of another command says which (`--quiet goes with
    /// --check-config`).
    static func unexpected(_ a: String, command: String?) -> UsageError {
        if command?.hasPrefix("--") ?? true, let other = AgentArguments.command(owning: a), other != command {
            return UsageError("\(a) goes with \(other)")
        }
        if a.hasPrefix("-") { return UsageError("unknown option \(a)") }
        return UsageError("unexpected argument \(a)" + (command == nil ? " (the configuration is given with --config FILE)" : ""))
    }
}
