import SyncJournalProtocol
import SyncJournalWire

/// Attachments (journals/PROTOCOL.md, "Attachments"): which contents the
/// server holds, one chunk of an upload, one chunk of a download. The
/// bytes of a content never travel inside a push or a pull, and each
/// request holds at most one chunk in memory.
extension HTTPTransport {
    /// Posts the contents to `/v1/attachments/status` (1,000 to a request,
    /// as the protocol allows) and returns one status per content, in the
    /// order asked. A reply that answers other contents, or claims more
    /// bytes received than a content's size, is malformed (transient).
    ///
    /// ```swift
    /// let statuses = try await transport.attachmentStatus([AttachmentStatusRequest(content: photo.content, size: photo.size)])
    /// ```
    public func attachmentStatus(_ contents: [AttachmentStatusRequest]) async throws(TransportError) -> [AttachmentStatus] {
        var statuses: [AttachmentStatus] = []
        statuses.reserveCapacity(contents.count)
        var start = 0
        while start < contents.count {
            let asked = Array(contents[start..<min(start + ProtocolLimits.maximumAttachmentStatusContents, contents.count)])
            let reply = try await send(.attachmentStatus, body: AttachmentStatusRequestCodec.encode(asked), pulledKinds: [])
            do {
                statuses += try AttachmentStatusReplyCodec.decode(reply.body, answering: asked, parser: parser)
            } catch {
                throw Self.malformed(.attachmentStatus, error)
            }
            start += asked.count
        }
        return statuses
    }

    /// Posts one chunk to `/v1/attachments/upload` as the raw body, named by
    /// `Sync-Content`, `Sync-Content-Size`, `Sync-Offset` and
    /// `Sync-Chunk-SHA256`, and returns where the upload stands. A refusal
    /// is ``TransportError/attachmentRefused(_:)``: a wrong offset carries
    /// the offset to go on from. A reply claiming bytes past the content's
    /// size, or a stored content short of it, is malformed (transient).
    ///
    /// ```swift
    /// let progress = try await transport.uploadAttachment(chunk)
    /// ```
    public func uploadAttachment(_ chunk: AttachmentChunk) async throws(TransportError) -> AttachmentUploadProgress {
        let exchange = HeaderExchange(sent: AttachmentHeaders.upload(chunk), bytesBody: true)
        let reply = try await send(.uploadAttachment, body: chunk.bytes, pulledKinds: [], exchange: exchange)
        let progress: AttachmentUploadProgress
        do {
            progress = try AttachmentUploadReplyCodec.decode(reply.body, parser: parser)
        } catch {
            throw Self.malformed(.uploadAttachment, error)
        }
        if progress.received > chunk.size || (progress.stored && progress.received != chunk.size) {
            throw .transient(reason: "malformed reply to \(SyncEndpoint.uploadAttachment.path): \(progress.received) bytes received "
                             + "of \(chunk.size)\(progress.stored ? ", stored" : "")", retryAfter: nil)
        }
        return progress
    }

    /// Posts `{"sha256", "offset", "length"}` to `/v1/attachments/download`
    /// and returns the bytes with the whole content's size and the hash the
    /// server gave them (`Sync-Content-Size`, `Sync-Chunk-SHA256`); the
    /// caller checks the bytes against it. A content the user may not read
    /// is ``TransportError/attachmentRefused(_:)`` with
    /// ``AttachmentRefusal/noSuchContent``. A reply without those headers,
    /// longer than asked, past the content's end, or empty before it, is
    /// malformed (transient).
    ///
    /// ```swift
    /// let chunk = try await transport.downloadAttachment(photo.content, offset: 0, length: 1 << 20)
    /// ```
    public func downloadAttachment(_ content: ContentHash, offset: Int64, length: Int) async throws(TransportError) -> AttachmentDownload {
        let length = min(max(length, 1), ProtocolLimits.maximumAttachmentChunkBytes)
        let request = AttachmentDownloadRequest(content: content, offset: offset, length: length)
        let exchange = HeaderExchange(kept: [AttachmentHeaders.contentSize, AttachmentHeaders.chunkHash])
        let reply = try await send(.downloadAttachment, body: AttachmentDownloadRequestCodec.encode(request), pulledKinds: [], exchange: exchange)
        let path = SyncEndpoint.downloadAttachment.path
        guard let sizeText = reply.headers[AttachmentHeaders.contentSize], let size = AttachmentHeaders.integer(sizeText) else {
            throw .transient(reason: "malformed reply to \(path): no \(AttachmentHeaders.contentSize) of plain decimal digits",
                             retryAfter: nil)
        }
        guard let hashText = reply.headers[AttachmentHeaders.chunkHash], let bytesHash = ContentHash(hashText) else {
            throw .transient(reason: "malformed reply to \(path): no \(AttachmentHeaders.chunkHash) of 64 lowercase hex digits",
                             retryAfter: nil)
        }
        let count = Int64(reply.body.count)
        if count > length || offset + count > size || (count == 0 && offset < size) {
            throw .transient(reason: "malformed reply to \(path): \(count) bytes from \(offset) of a content of \(size) bytes, "
                             + "\(length) asked for", retryAfter: nil)
        }
        return AttachmentDownload(bytes: reply.body, size: size, bytesHash: bytesHash)
    }
}
