/// Why a text is not JSON, and where.
///
/// `description` reads like "expected ':' after object key at byte 17". Offsets count bytes of
/// the UTF-8 input from 0.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Byte offset (from 0) at which the problem was found.
    public var offset: Int
    /// What is wrong, without the position: "unterminated string".
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at byte \(offset)" }
}
