/// Why a text is not valid TOML, and where.
///
/// `description` reads like "line 3, column 9: expected `=` after key `pin`, found `5`".
public struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based line of the problem.
    public var line: Int
    /// 1-based column, counted in Unicode scalars.
    public var column: Int
    /// What is wrong and what was expected, without the position.
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}
