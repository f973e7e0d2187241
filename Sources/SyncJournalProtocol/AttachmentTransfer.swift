/// One content an attachment status request asks about.
public struct AttachmentStatusRequest: Sendable, Hashable {
    /// The content's name.
    public var content: ContentHash
    /// Its size in bytes.
    public var size: Int64

    /// Asks about `content` of `size` bytes.
    public init(content: ContentHash, size: Int64) {
        self.content = content
        self.size = size
    }
}

/// What the server holds of one content for the asking user.
public struct AttachmentStatus: Sendable, Hashable {
    /// The content's name.
    public var content: ContentHash
    /// Whether the server holds all of it and the user may read it.
    public var stored: Bool
    /// Bytes of the user's own unfinished upload the server keeps: where an upload goes on.
    public var received: Int64

    /// A status.
    public init(content: ContentHash, stored: Bool, received: Int64) {
        self.content = content
        self.stored = stored
        self.received = received
    }
}

/// One chunk of an upload: `bytes` of `content` (of `size` bytes in all) from `offset`.
public struct AttachmentChunk: Sendable, Hashable {
    /// The content's name.
    public var content: ContentHash
    /// The whole content's size.
    public var size: Int64
    /// Where the chunk starts.
    public var offset: Int64
    /// The chunk's bytes (1 byte to 4 MiB).
    public var bytes: [UInt8]
    /// The SHA-256 of ``bytes``, so the server refuses a damaged chunk.
    public var bytesHash: ContentHash

    /// A chunk and its hash.
    public init(content: ContentHash, size: Int64, offset: Int64, bytes: [UInt8], bytesHash: ContentHash) {
        self.content = content
        self.size = size
        self.offset = offset
        self.bytes = bytes
        self.bytesHash = bytesHash
    }
}

/// Where an upload stands after a chunk.
public struct AttachmentUploadProgress: Sendable, Hashable {
    /// Bytes the server now holds of the upload.
    public var received: Int64
    /// Whether the content is stored whole (the last chunk arrived and the hash matched).
    public var stored: Bool

    /// A progress.
    public init(received: Int64, stored: Bool) {
        self.received = received
        self.stored = stored
    }
}

/// One downloaded chunk.
public struct AttachmentDownload: Sendable, Hashable {
    /// The bytes from the offset asked for.
    public var bytes: [UInt8]
    /// The whole content's size.
    public var size: Int64
    /// The SHA-256 of ``bytes`` as the server sent it.
    public var bytesHash: ContentHash

    /// A chunk as it arrived.
    public init(bytes: [UInt8], size: Int64, bytesHash: ContentHash) {
        self.bytes = bytes
        self.size = size
        self.bytesHash = bytesHash
    }
}

/// The words of a `rejected` result for an edit that refers to a content
/// the server does not hold for the user (journals/PROTOCOL.md,
/// "Attachments"): `missing content HEX`. Not permanent: the client uploads
/// the content and sends the edit again.
package enum MissingContentRefusal {
    /// The reason for `content`.
    package static func reason(_ content: ContentHash) -> String { "missing content \(content.hex)" }

    /// The content a reason names, or `nil` for another reason.
    package static func content(in reason: String) -> ContentHash? {
        let prefix = "missing content "
        guard reason.hasPrefix(prefix) else { return nil }
        return ContentHash(String(reason.dropFirst(prefix.count)))
    }
}
