import SyncJournalProtocol

/// Where one encoded value is collected while a type encodes itself: a single value, the members of
/// an object or the elements of an array. Containers share slots, so a nested container fills in
/// its part of the value after its parent was made.
final class EncodedSlot {
    /// A value encoded whole (a scalar, or one a special type made directly).
    var single: FieldValue?
    /// The members of a keyed container, when the slot holds one.
    var members: [String: EncodedSlot]?
    /// The elements of an unkeyed container, when the slot holds one.
    var elements: [EncodedSlot]?

    init() {}

    init(_ value: FieldValue) { single = value }

    /// The members, made empty on first use.
    func keyed() -> EncodedSlot {
        if members == nil { members = [:] }
        return self
    }

    /// The elements, made empty on first use.
    func unkeyed() -> EncodedSlot {
        if elements == nil { elements = [] }
        return self
    }

    /// The value collected here; a type that encoded nothing is an empty object.
    var value: FieldValue {
        if let single { return single }
        if let elements { return .array(elements.map(\.value)) }
        return .object((members ?? [:]).mapValues(\.value))
    }
}
