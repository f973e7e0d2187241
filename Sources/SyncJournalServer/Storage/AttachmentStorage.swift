import SyncJournalProtocol
import SyncJournalWire

/// A storage that keeps attachment contents (journals/PROTOCOL.md,
/// "Attachments"): ``SyncRouter`` answers the three attachment paths
/// through it; over a storage without it they answer 404, as a server from
/// before attachments. Every implementation decides with the shared
/// `AttachmentRules` and never holds a whole content in memory: an upload
/// comes and a download goes one chunk (at most 4 MiB) at a time.
///
/// ```swift
/// let progress = try storage.uploadAttachment(user: "u1", content: hash, size: 10, offset: 0, bytes: bytes)
/// let part = try storage.downloadAttachment(user: "u1", AttachmentDownloadRequest(content: hash, offset: 0, length: 4 << 20))
/// ```
public protocol AttachmentStorage: SyncStorage {
    /// Which of `contents` the storage holds for `user`, in the order asked.
    ///
    /// ```swift
    /// let statuses = try storage.attachmentStatus(user: "u1", [AttachmentStatusRequest(content: hash, size: 10)])
    /// ```
    func attachmentStatus(user: String, _ contents: [AttachmentStatusRequest]) throws(StorageError) -> [AttachmentStatus]

    /// Keeps one chunk of `user`'s upload of `content` (declared `size`)
    /// at `offset`, whole or not at all; when it is the last, checks the
    /// whole content against its hash and stores it (once, whoever uploads it).
    /// The chunk's own hash (`Sync-Chunk-SHA256`) is checked before.
    ///
    /// ```swift
    /// let progress = try storage.uploadAttachment(user: "u1", content: hash, size: 10, offset: 0, bytes: bytes)
    /// ```
    ///
    /// - Throws: ``StorageError/attachmentRefused(_:)`` (wrong offset, too
    ///   large, quota exceeded, content mismatch), ``StorageError/badRequest(_:)``
    ///   for a malformed chunk; nothing is kept then.
    func uploadAttachment(user: String, content: ContentHash, size: Int64, offset: Int64, bytes: [UInt8]) throws(StorageError) -> AttachmentUploadProgress

    /// At most `request.length` bytes of a content `user` may read, from `request.offset`.
    ///
    /// ```swift
    /// let part = try storage.downloadAttachment(user: "u1", AttachmentDownloadRequest(content: hash, offset: 0, length: 1_024))
    /// ```
    ///
    /// - Throws: ``StorageError/attachmentRefused(_:)`` with
    ///   ``AttachmentRefusal/noSuchContent`` for a content `user` may not
    ///   read or that is not stored (the same answer); ``StorageError/badRequest(_:)``
    ///   for an offset past its end.
    func downloadAttachment(user: String, _ request: AttachmentDownloadRequest) throws(StorageError) -> AttachmentDownload

    /// Deletes, as of `now` (milliseconds), the contents no live row refers
    /// to whose last upload is older than the grace period, and the
    /// unfinished uploads untouched that long. The server runs it with its
    /// other upkeep; tests call it with a chosen `now`.
    ///
    /// ```swift
    /// let collected = try storage.collectAttachments(now: clock() + 8 * 86_400_000)
    /// ```
    @discardableResult
    func collectAttachments(now: Int64) throws(StorageError) -> AttachmentCollection

    /// The storage's clock, in milliseconds: what ``collectAttachments(now:)`` is run with.
    ///
    /// ```swift
    /// try storage.collectAttachments(now: storage.attachmentClock())
    /// ```
    func attachmentClock() -> Int64
}

/// What one collection of attachments deleted.
///
/// ```swift
/// let collected = try storage.collectAttachments(now: now)
/// print(collected.contents, collected.uploads)
/// ```
public struct AttachmentCollection: Sendable, Hashable {
    /// Contents deleted (no live row referred to them, not uploaded within the grace period).
    public var contents: Int
    /// Unfinished uploads deleted (untouched for the grace period).
    public var uploads: Int

    /// A collection that deleted `contents` contents and `uploads` uploads.
    ///
    /// ```swift
    /// #expect(collected == AttachmentCollection(contents: 1, uploads: 0))
    /// ```
    public init(contents: Int, uploads: Int) {
        self.contents = contents
        self.uploads = uploads
    }
}
