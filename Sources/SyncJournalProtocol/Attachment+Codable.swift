/// An attachment as `Codable` types see it, so a model holding one stays
/// `Codable`: a typed record stores it as the field value itself
/// (``FieldValue/attachment(_:)``); any other coder, such as
/// `JSONEncoder`, writes the three members the sync protocol's JSON gives
/// it, `{"sha256": HEX, "size": BYTES, "type": "MEDIA/TYPE"}`.
extension Attachment: Codable {
    private enum CodingKeys: String, CodingKey {
        case content = "sha256", size, mediaType = "type"
    }

    /// Reads `sha256`, `size` and `type`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a hash that is not 64
    ///   lowercase hex digits, or a value with a ``problem``; the errors of
    ///   a member that is missing or of another type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let hex = try container.decode(String.self, forKey: .content)
        guard let content = ContentHash(hex) else {
            throw DecodingError.dataCorruptedError(forKey: .content, in: container,
                                                   debugDescription: "\"\(hex)\" is not 64 lowercase hex digits")
        }
        let attachment = Attachment(content: content, size: try container.decode(Int64.self, forKey: .size),
                                    mediaType: try container.decode(String.self, forKey: .mediaType))
        // Refused on read as the journal and the wire refuse it, so no coder makes one the store cannot keep.
        if let problem = attachment.problem {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: problem))
        }
        self = attachment
    }

    /// Writes `sha256` (64 lowercase hex digits), `size` and `type`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(content.hex, forKey: .content)
        try container.encode(size, forKey: .size)
        try container.encode(mediaType, forKey: .mediaType)
    }
}
