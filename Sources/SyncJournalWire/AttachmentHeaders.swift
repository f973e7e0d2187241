import SyncJournalProtocol

/// The headers of an attachment upload and of a download's answer
/// (journals/PROTOCOL.md, "Attachments"): a chunk's bytes travel as the raw
/// body, so what names them travels beside it.
public enum AttachmentHeaders {
    /// The content's name, 64 lowercase hex digits.
    public static let content = "Sync-Content"
    /// The whole content's size in bytes.
    public static let contentSize = "Sync-Content-Size"
    /// Where the upload's chunk starts.
    public static let offset = "Sync-Offset"
    /// The SHA-256 of the body's bytes.
    public static let chunkHash = "Sync-Chunk-SHA256"

    /// The headers of an upload of `chunk`.
    public static func upload(_ chunk: AttachmentChunk) -> [(name: String, value: String)] {
        [(content, chunk.content.hex), (contentSize, String(chunk.size)), (offset, String(chunk.offset)), (chunkHash, chunk.bytesHash.hex)]
    }

    /// A header's value as a non-negative integer in plain decimal (no sign, no leading zeros but `0`), or `nil`.
    public static func integer(_ text: String) -> Int64? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              digits.count == 1 || digits[0] != UInt8(ascii: "0") else { return nil }
        return Int64(text)
    }
}
