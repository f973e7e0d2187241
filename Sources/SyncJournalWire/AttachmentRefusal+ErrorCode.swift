import SyncJournalProtocol

/// How an attachment refusal travels (journals/PROTOCOL.md, "Attachments").
extension AttachmentRefusal {
    /// The protocol's `error` code for the refusal.
    public var errorCode: ProtocolErrorCode {
        switch self {
        case .wrongOffset: return .wrongOffset
        case .tooLarge: return .tooLarge
        case .quotaExceeded: return .quotaExceeded
        case .chunkMismatch: return .chunkMismatch
        case .contentMismatch: return .contentMismatch
        case .noSuchContent: return .noSuchContent
        }
    }

    /// The HTTP status a server answers the refusal with.
    public var httpStatus: Int {
        switch self {
        case .wrongOffset: return 409
        case .tooLarge, .quotaExceeded: return 413
        case .chunkMismatch, .contentMismatch: return 422
        case .noSuchContent: return 404
        }
    }
}

extension ErrorBody {
    /// The body a server answers an attachment `refusal` with (status ``AttachmentRefusal/httpStatus``).
    public init(refusal: AttachmentRefusal) {
        switch refusal {
        case .wrongOffset(let received): self.init(code: .wrongOffset, message: refusal.description, received: received)
        case .tooLarge(let reason), .quotaExceeded(let reason): self.init(code: refusal.errorCode, message: reason)
        case .chunkMismatch, .contentMismatch, .noSuchContent: self.init(code: refusal.errorCode, message: refusal.description)
        }
    }

    /// The attachment refusal a body stands for, or `nil` when its code is
    /// not one (a `too_large` is one only as the answer to an upload, which
    /// the caller knows), or a `wrong_offset` says no `received`.
    public func attachmentRefusal(toUpload: Bool) -> AttachmentRefusal? {
        switch code {
        case .wrongOffset: return received.map { AttachmentRefusal.wrongOffset(received: $0) }
        case .tooLarge: return toUpload ? .tooLarge(reason: message) : nil
        case .quotaExceeded: return .quotaExceeded(reason: message)
        case .chunkMismatch: return .chunkMismatch
        case .contentMismatch: return .contentMismatch
        case .noSuchContent: return .noSuchContent
        default: return nil
        }
    }
}
