import SyncJournalCore
import SyncJournalProtocol
import SyncJournalWire

/// The attachment paths (journals/PROTOCOL.md, "Attachments"): status and
/// download take JSON, an upload takes its chunk as the body with the
/// content, its size and the offset in headers. Each runs on the storage
/// workers as the other routes do; over a storage that keeps no
/// attachments they answer 404, as a server from before attachments.
extension SyncRouter {
    func attachments(_ endpoint: SyncEndpoint, _ request: HTTPRequest, user: String) throws(RouteFailure) -> HTTPResponse {
        guard let storage = storage as? any AttachmentStorage else {
            return Self.error(404, .notFound, "no such path: \(request.path.prefix(200))")
        }
        switch endpoint {
        case .attachmentStatus:
            let contents = try decode { () throws(WireError) in try AttachmentStatusRequestCodec.decode(request.body) }
            let statuses = try store { () throws(StorageError) in try storage.attachmentStatus(user: user, contents) }
            return .json(status: 200, body: AttachmentStatusReplyCodec.encode(statuses))
        case .uploadAttachment:
            return try upload(request, user: user, storage)
        default:
            let asked = try decode { () throws(WireError) in try AttachmentDownloadRequestCodec.decode(request.body) }
            let part = try store { () throws(StorageError) in try storage.downloadAttachment(user: user, asked) }
            return HTTPResponse(status: 200, headers: [
                HTTPHeader(name: "Content-Type", value: "application/octet-stream"),
                HTTPHeader(name: AttachmentHeaders.contentSize, value: String(part.size)),
                HTTPHeader(name: AttachmentHeaders.chunkHash, value: part.bytesHash.hex),
            ], body: part.bytes)
        }
    }

    /// One chunk: the headers parsed (400 naming a malformed one), the
    /// body checked against `Sync-Chunk-SHA256` when given (422
    /// `chunk_mismatch`, nothing kept), then kept by the storage.
    private func upload(_ request: HTTPRequest, user: String, _ storage: any AttachmentStorage) throws(RouteFailure) -> HTTPResponse {
        let contentText = try Self.header(request, AttachmentHeaders.content, required: true) ?? ""
        guard let content = ContentHash(contentText) else {
            throw .badHeader("\(AttachmentHeaders.content): \"\(contentText.prefix(80))\" is not 64 lowercase hex digits")
        }
        let size = try Self.integerHeader(request, AttachmentHeaders.contentSize)
        let offset = try Self.integerHeader(request, AttachmentHeaders.offset)
        if let hashText = try Self.header(request, AttachmentHeaders.chunkHash, required: false) {
            guard let expected = ContentHash(hashText) else {
                throw .badHeader("\(AttachmentHeaders.chunkHash): \"\(hashText.prefix(80))\" is not 64 lowercase hex digits")
            }
            if SHA256.digest(request.body) != expected.bytes { throw .storage(.attachmentRefused(.chunkMismatch)) }
        }
        let progress = try store { () throws(StorageError) in
            try storage.uploadAttachment(user: user, content: content, size: size, offset: offset, bytes: request.body)
        }
        return .json(status: 200, body: AttachmentUploadReplyCodec.encode(progress))
    }

    /// The one value of header `name`; `nil` when absent and not `required`.
    private static func header(_ request: HTTPRequest, _ name: String, required: Bool) throws(RouteFailure) -> String? {
        let values = request.headers.filter { $0.hasName(name) }
        if values.count > 1 { throw .badHeader("\(name) given \(values.count) times") }
        guard let value = values.first?.value else {
            if required { throw .badHeader("an upload needs the header \(name)") }
            return nil
        }
        return value
    }

    /// A required header holding a decimal integer of at most 19 digits.
    private static func integerHeader(_ request: HTTPRequest, _ name: String) throws(RouteFailure) -> Int64 {
        let text = try header(request, name, required: true) ?? ""
        guard let value = AttachmentHeaders.integer(text) else { throw .badHeader("\(name): \"\(text.prefix(40))\" is not a decimal count") }
        return value
    }
}
