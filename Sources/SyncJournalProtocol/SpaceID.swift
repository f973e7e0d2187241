/// Where a record lives: the user's personal space, or a shared space named
/// by a UUID (journals/PROTOCOL.md, "Spaces").
///
/// Record ids are unique per space, so a record is named by its space, kind
/// and id (``RecordKey``). Every record made before spaces existed is in the
/// personal space, which has no id on the wire.
///
/// ```swift
/// let trip = SpaceID("2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b")!
/// print(trip.isPersonal)            // false
/// print(SpaceID.personal)           // personal
/// ```
public struct SpaceID: Sendable, Hashable, CustomStringConvertible {
    /// The shared space's id in its one spelling (lowercase 8-4-4-4-12
    /// hex), or `nil` for the personal space.
    public let text: String?

    /// The caller's personal space: every user has one, and it is the
    /// space of every record that does not name another.
    public static let personal = SpaceID(validated: nil)

    private init(validated text: String?) {
        self.text = text
    }

    /// The shared space `text` names, or `nil` when `text` is not a UUID in
    /// the lowercase `8-4-4-4-12` hex form (its only spelling: an uppercase
    /// one would name the same bytes twice).
    public init?(_ text: String) {
        guard Self.isSpelling(text) else { return nil }
        self.text = text
    }

    /// A new shared space id, random (version 4), for a space this device creates.
    package static func random() -> SpaceID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new shared space id drawn from `generator` (tests and the simulator
    /// pass a seeded one).
    package static func random(using generator: inout some RandomNumberGenerator) -> SpaceID {
        SpaceID(validated: OperationID.random(using: &generator).description)
    }

    /// Whether this is the personal space.
    public var isPersonal: Bool { text == nil }

    /// The order spaces are listed and written in, so output and files are
    /// the same on every run: the personal space first, then shared spaces by
    /// the bytes of their ids.
    package static func < (lhs: SpaceID, rhs: SpaceID) -> Bool {
        switch (lhs.text, rhs.text) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (let left?, let right?): return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
    }

    /// `personal`, or the shared space's id.
    public var description: String { text ?? "personal" }

    /// Whether `text` is a UUID in lowercase 8-4-4-4-12 hex.
    static func isSpelling(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return false }
        for (index, byte) in utf8.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else {
                    return false
                }
            }
        }
        return true
    }
}
