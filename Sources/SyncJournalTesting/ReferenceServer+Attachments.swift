import SyncJournalCore
import SyncJournalProtocol

/// Attachments (journals/PROTOCOL.md, "Attachments") in memory, with the
/// rules `sync-server`'s storages decide with (`AttachmentRules`): the read
/// rule, chunked uploads that resume, the refusals, the quota, one copy of
/// each content, and collection by the server's clock.
extension ReferenceServer {
    /// The limits the attachment rules apply now.
    var attachmentLimits: AttachmentLimits {
        AttachmentLimits(maximumContentBytes: maximumAttachmentBytes, quotaBytes: attachmentQuotaBytes, graceMilliseconds: attachmentGraceMilliseconds)
    }

    /// Sets the limits given (the others stay): the largest content, the
    /// per-user quota and the collection grace period (negative values act as 0).
    ///
    /// ```swift
    /// await server.setAttachmentLimits(maximumBytes: 8 << 20, quotaBytes: 64 << 20)
    /// ```
    public func setAttachmentLimits(maximumBytes: Int64? = nil, quotaBytes: Int64? = nil, graceMilliseconds: Int64? = nil) {
        if let maximumBytes { maximumAttachmentBytes = max(0, maximumBytes) }
        if let quotaBytes { attachmentQuotaBytes = max(0, quotaBytes) }
        if let graceMilliseconds { attachmentGraceMilliseconds = max(0, graceMilliseconds) }
    }

    /// Which of `contents` the server holds for `user`, in the order asked
    /// (`POST /v1/attachments/status`): stored when `user` may read it, else
    /// the bytes of `user`'s own unfinished upload.
    ///
    /// ```swift
    /// let statuses = try await server.attachmentStatus(user: "u1", [AttachmentStatusRequest(content: hash, size: 10)])
    /// ```
    ///
    /// - Throws: ``TransportError/permanent(reason:)`` for no contents, more
    ///   than 1,000, one asked
    ///   about twice or a negative size, as `sync-server` answers 400.
    public func attachmentStatus(user: String, _ contents: [AttachmentStatusRequest]) throws(TransportError) -> [AttachmentStatus] {
        guard (1...ProtocolLimits.maximumAttachmentStatusContents).contains(contents.count) else {
            throw .permanent(reason: "400: 1 to \(ProtocolLimits.maximumAttachmentStatusContents) contents, not \(contents.count)")
        }
        guard Set(contents.map(\.content)).count == contents.count else { throw .permanent(reason: "400: a content asked about twice") }
        if let negative = contents.first(where: { $0.size < 0 }) { throw .permanent(reason: "400: a negative size \(negative.size)") }
        var statuses: [AttachmentStatus] = []
        for content in contents { statuses.append(try AttachmentRules.status(of: content, user: user, storage)) }
        return statuses
    }

    /// Takes one chunk of an upload by `user` (`POST /v1/attachments/upload`).
    ///
    /// ```swift
    /// let progress = try await server.uploadAttachment(user: "u1", chunk)   // received, stored
    /// ```
    ///
    /// - Throws: ``TransportError/attachmentRefused(_:)`` with the refusal
    ///   (wrong offset, too large, quota exceeded, a damaged chunk, a
    ///   content that does not hash to its name); ``TransportError/permanent(reason:)``
    ///   for a malformed chunk (400). Nothing is kept then.
    public func uploadAttachment(user: String, _ chunk: AttachmentChunk) throws(TransportError) -> AttachmentUploadProgress {
        if let problem = AttachmentRules.malformation(size: chunk.size, offset: chunk.offset, count: chunk.bytes.count) {
            throw .permanent(reason: "400: \(problem)")
        }
        if SHA256.digest(chunk.bytes) != chunk.bytesHash.bytes { throw .attachmentRefused(.chunkMismatch) }
        let decision = try AttachmentRules.upload(content: chunk.content, size: chunk.size, offset: chunk.offset, count: chunk.bytes.count,
                                              user: user, limits: attachmentLimits, storage)
        let key = InMemoryAttachments.UploadKey(user: user, content: chunk.content)
        let now = storage.clock
        switch decision {
        case .malformed(let reason): throw .permanent(reason: "400: \(reason)")
        case .refused(let refusal): throw .attachmentRefused(refusal)
        case .proceed(.alreadyReadable(let size)): return AttachmentUploadProgress(received: size, stored: true)
        case .proceed(.start):
            storage.attachments.uploads[key] = InMemoryAttachments.Upload(size: chunk.size, bytes: chunk.bytes, touchedAt: now)
        case .proceed(.append):
            storage.attachments.uploads[key]?.bytes += chunk.bytes
            storage.attachments.uploads[key]?.touchedAt = now
        }
        guard let upload = storage.attachments.uploads[key] else { throw .permanent(reason: "the upload vanished") }
        let received = Int64(upload.bytes.count)
        guard received == upload.size else { return AttachmentUploadProgress(received: received, stored: false) }
        storage.attachments.uploads[key] = nil
        guard SHA256.digest(upload.bytes) == chunk.content.bytes else { throw .attachmentRefused(.contentMismatch) }
        // One copy of each content, whoever uploads it; the upload's date keeps it from collection.
        if storage.attachments.stored[chunk.content] == nil {
            storage.attachments.stored[chunk.content] = InMemoryAttachments.StoredContent(bytes: upload.bytes, storedAt: now)
        } else {
            storage.attachments.stored[chunk.content]?.storedAt = now
        }
        storage.attachments.uploaders[chunk.content, default: []].insert(user)
        return AttachmentUploadProgress(received: received, stored: true)
    }

    /// At most `length` bytes of `content` from `offset` for `user`
    /// (`POST /v1/attachments/download`), with the content's size and the
    /// hash of the bytes.
    ///
    /// ```swift
    /// let part = try await server.downloadAttachment(user: "u1", hash, offset: 0, length: 4 << 20)
    /// ```
    ///
    /// - Throws: ``TransportError/attachmentRefused(_:)`` with
    ///   ``AttachmentRefusal/noSuchContent`` for a content `user` may not
    ///   read or that is not stored (the same answer); ``TransportError/permanent(reason:)``
    ///   for an offset past the end or a length outside 1 to 4 MiB (400).
    public func downloadAttachment(user: String, _ content: ContentHash, offset: Int64, length: Int) throws(TransportError) -> AttachmentDownload {
        guard (1...ProtocolLimits.maximumAttachmentChunkBytes).contains(length) else {
            throw .permanent(reason: "400: a length of 1 to \(ProtocolLimits.maximumAttachmentChunkBytes) bytes, not \(length)")
        }
        guard let size = try AttachmentRules.readableSize(of: content, user: user, storage),
              let stored = content == .empty ? [] : storage.attachments.stored[content]?.bytes else { throw .attachmentRefused(.noSuchContent) }
        guard let range = AttachmentRules.downloadRange(offset: offset, length: length, size: size) else {
            throw .permanent(reason: "400: offset \(offset) is past the content's end, \(size)")
        }
        let bytes = Array(stored[Int(range.lowerBound)..<Int(range.upperBound)])
        return AttachmentDownload(bytes: bytes, size: size, bytesHash: ContentHash(bytes: SHA256.digest(bytes))!)
    }

    /// Deletes what collection deletes (journals/PROTOCOL.md, "Collection")
    /// as of `now` (the server's clock by default): contents no live row
    /// refers to and last uploaded more than ``attachmentGraceMilliseconds``
    /// before, and unfinished uploads untouched that long. A content with an
    /// unfinished upload of it is kept.
    ///
    /// ```swift
    /// await server.tick(8 * 86_400_000)
    /// let collected = await server.collectAttachments()
    /// ```
    ///
    /// - Returns: how many contents and unfinished uploads were deleted.
    @discardableResult
    public func collectAttachments(now: Int64? = nil) -> (contents: Int, uploads: Int) {
        let (cutoff, overflow) = (now ?? storage.clock).subtractingReportingOverflow(attachmentGraceMilliseconds)
        guard !overflow else { return (0, 0) }
        let staleUploads = storage.attachments.uploads.filter { $0.value.touchedAt < cutoff }.map(\.key)
        for key in staleUploads { storage.attachments.uploads[key] = nil }
        let uploading = Set(storage.attachments.uploads.keys.map(\.content))
        let unreferenced = storage.attachments.stored.filter { content, stored in
            stored.storedAt < cutoff && !uploading.contains(content) && !storage.isReferenced(content)
        }.map(\.key)
        for content in unreferenced {
            storage.attachments.stored[content] = nil
            storage.attachments.uploaders[content] = nil
        }
        return (unreferenced.count, staleUploads.count)
    }

    /// The contents the server holds whole, whoever uploaded them.
    ///
    /// ```swift
    /// #expect(await server.storedContents == [hash], "one copy, however many uploaded it")
    /// ```
    public var storedContents: Set<ContentHash> { Set(storage.attachments.stored.keys) }

    /// The unfinished uploads the server keeps, as (user, content, bytes received).
    ///
    /// ```swift
    /// #expect(await server.unfinishedUploads.isEmpty)
    /// ```
    public var unfinishedUploads: [(user: String, content: ContentHash, received: Int64)] {
        storage.attachments.uploads.map { ($0.key.user, $0.key.content, Int64($0.value.bytes.count)) }
            .sorted { ($0.user, $0.content.hex) < ($1.user, $1.content.hex) }
    }
}

extension ReferenceTransport {
    /// Which contents the server holds for ``user`` (see ``ReferenceServer/attachmentStatus(user:_:)``).
    public func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        try await server.attachmentStatus(user: user, contents)
    }

    /// Uploads one chunk as ``user`` (see ``ReferenceServer/uploadAttachment(user:_:)``).
    public func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        try await server.uploadAttachment(user: user, chunk)
    }

    /// Downloads part of a content as ``user`` (see ``ReferenceServer/downloadAttachment(user:_:offset:length:)``).
    public func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        try await server.downloadAttachment(user: user, content, offset: offset, length: length)
    }
}
