/// Why a server refused an attachment transfer (journals/PROTOCOL.md,
/// "Attachments"), with what the client needs to act.
///
/// ```swift
/// if case .attachmentRefused(.wrongOffset(let received)) = error { offset = received }
/// ```
public enum AttachmentRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The upload's offset is not where the server's copy ends; go on from `received`. HTTP 409 `wrong_offset`.
    case wrongOffset(received: Int64)
    /// The content is larger than the server takes. HTTP 413 `too_large`.
    case tooLarge(reason: String)
    /// The upload would take the user past their quota. HTTP 413 `quota_exceeded`.
    case quotaExceeded(reason: String)
    /// The chunk's bytes do not hash to the chunk's stated SHA-256; nothing was kept. HTTP 422 `chunk_mismatch`.
    case chunkMismatch
    /// The whole upload does not hash to the content's name; it was thrown away. HTTP 422 `content_mismatch`.
    case contentMismatch
    /// The server holds no such content the user may read (it never says which). HTTP 404 `no_such_content`.
    case noSuchContent

    /// Whether sending the same content again cannot succeed: the content
    /// is too large or over the quota.
    public var isPermanent: Bool {
        switch self {
        case .tooLarge, .quotaExceeded: return true
        case .wrongOffset, .chunkMismatch, .contentMismatch, .noSuchContent: return false
        }
    }

    /// What was refused, in words.
    public var description: String {
        switch self {
        case .wrongOffset(let received): return "the upload goes on from byte \(received)"
        case .tooLarge(let reason): return "too large: \(reason)"
        case .quotaExceeded(let reason): return "quota exceeded: \(reason)"
        case .chunkMismatch: return "a chunk arrived damaged (its bytes do not match its hash)"
        case .contentMismatch: return "the uploaded bytes do not match the content's hash"
        case .noSuchContent: return "no such content"
        }
    }
}
