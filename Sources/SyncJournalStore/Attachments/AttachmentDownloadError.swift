import SyncJournalProtocol

/// Why a download of an attachment kept no file (`SyncEngine.download(_:)`).
/// A file is kept only whole and hashing to its content's name, so none of
/// these leaves a partial file where the app could take it for the content.
public enum AttachmentDownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The transport failed: offline, the server unreachable, or
    /// ``AttachmentRefusal/noSuchContent`` (this user may not read it, or the
    /// server does not hold it). What arrived whole is kept for the next attempt.
    case transport(TransportError)
    /// The bytes that came do not hash to the content's name; nothing was kept.
    case damaged(ContentHash)
    /// The server sent more bytes than the content's size, or a chunk of
    /// another size than the content's; nothing was kept.
    case wrongSize(ContentHash)
    /// The file could not be written on this device.
    case store(StoreError)

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .transport(let error): return "download failed: \(error)"
        case .damaged(let content): return "the downloaded bytes do not hash to content \(content.hex)"
        case .wrongSize(let content): return "the server sent another size than content \(content.hex)'s"
        case .store(let error): return "the downloaded file could not be kept: \(error)"
        }
    }
}
