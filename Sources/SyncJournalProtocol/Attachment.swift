/// A file that belongs to a record, as a field of the record holds it: the
/// name of its content, its size and its media type. The bytes live beside
/// the journal (and on the server, beside its database), never in the
/// record, so a photo costs a record a few dozen bytes.
///
/// Set it like any field value; `LocalStore.attach(fileAt:mediaType:)` makes one from a
/// file, written and synced on disk before the edit that refers to it.
///
/// ```swift
/// let photo = try await store.attach(fileAt: "/tmp/tapas.jpg", mediaType: "image/jpeg")
/// try await store.update("pin", id: "p1", changes: ["photo": .attachment(photo)])
/// ```
public struct Attachment: Sendable, Hashable, CustomStringConvertible {
    /// The SHA-256 of the bytes.
    public var content: ContentHash
    /// The size in bytes.
    public var size: Int64
    /// The media type, such as `image/jpeg` (`application/octet-stream` when unknown).
    public var mediaType: String

    /// The longest media type, in bytes.
    public static let maximumMediaTypeLength = 127

    /// An attachment of `size` bytes named `content`.
    public init(content: ContentHash, size: Int64, mediaType: String = "application/octet-stream") {
        self.content = content
        self.size = size
        self.mediaType = mediaType
    }

    /// Why the value cannot be stored or sent, or `nil`: a negative size, or
    /// a media type that is not `type/subtype` in printable ASCII of 3 to
    /// ``maximumMediaTypeLength`` bytes.
    public var problem: String? {
        if size < 0 { return "an attachment's size \(size) is negative" }
        let type = Array(mediaType.utf8)
        let printable = type.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        let slashes = type.filter { $0 == UInt8(ascii: "/") }.count
        if !(3...Self.maximumMediaTypeLength).contains(type.count) || !printable || slashes != 1
            || type.first == UInt8(ascii: "/") || type.last == UInt8(ascii: "/") {
            return "an attachment's media type \"\(mediaType)\" is not type/subtype in 3 to \(Self.maximumMediaTypeLength) printable ASCII bytes"
        }
        return nil
    }

    /// `sha256:HEX (SIZE bytes, TYPE)`.
    public var description: String { "sha256:\(content.hex) (\(size) bytes, \(mediaType))" }
}

extension FieldValue {
    /// Every attachment in this value: itself, or those inside its arrays and objects.
    public var attachments: [Attachment] {
        switch self {
        case .attachment(let attachment): return [attachment]
        case .array(let elements): return elements.flatMap(\.attachments)
        case .object(let members): return members.values.flatMap(\.attachments)
        default: return []
        }
    }
}
