/// The identity of one server database: made when its schema is created,
/// never changed afterwards, and carried by every reply. A device that
/// synced with one identity and then meets another knows the database was
/// reset or swapped, before it pushes anything to it.
///
/// ```swift
/// let identity = ServerIdentity("0f6d2c1e-5b7a-4c2e-9a55-2b8e4d7f0c13")
/// print(identity?.description ?? "not an identity")
/// ```
public struct ServerIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The identity's text: 1 to 64 ASCII letters, digits, `-` or `_`.
    public let text: String

    /// The longest identity, in characters.
    package static let maximumLength = 64

    /// An identity from its text, or `nil` when the text is empty, longer
    /// than 64 characters or holds anything but ASCII letters, digits, `-` and `_`.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength,
              text.utf8.allSatisfy({ Self.isAllowed($0) }) else { return nil }
        self.text = text
    }

    /// The identity's text.
    public var description: String { text }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
