/// How much a server lets its users store as attachments
/// (journals/PROTOCOL.md, "Attachments", "Limits"): `sync-server`'s
/// `--max-attachment-bytes`, `--attachment-quota-bytes` and
/// `--attachment-grace-seconds`, and the reference server's settings.
package struct AttachmentLimits: Sendable, Hashable {
    /// The largest content the server takes (413 `too_large` above it).
    package var maximumContentBytes: Int64
    /// Per user, the sizes of the contents they uploaded whole plus the
    /// declared sizes of their unfinished uploads (413 `quota_exceeded` past it).
    package var quotaBytes: Int64
    /// How long a content no live row refers to is kept after its last
    /// upload, and how long an untouched unfinished upload is kept.
    package var graceMilliseconds: Int64

    /// The defaults: 1 GiB a content, 10 GiB a user, 7 days' grace.
    package static let standard = AttachmentLimits(maximumContentBytes: 1 << 30, quotaBytes: 10 << 30, graceMilliseconds: 604_800_000)

    /// Limits with these values (negative values act as 0).
    package init(maximumContentBytes: Int64, quotaBytes: Int64, graceMilliseconds: Int64) {
        self.maximumContentBytes = max(0, maximumContentBytes)
        self.quotaBytes = max(0, quotaBytes)
        self.graceMilliseconds = max(0, graceMilliseconds)
    }
}

/// One user's upload of one content that has not arrived whole: the size
/// it declared and how many bytes the server keeps (always the end of a
/// chunk that arrived whole).
package struct UnfinishedUpload: Sendable, Hashable {
    /// The content's size, as the upload's first chunk declared it.
    package var size: Int64
    /// The bytes kept, from the start.
    package var received: Int64

    /// An upload of `size` bytes of which `received` are kept.
    package init(size: Int64, received: Int64) {
        self.size = size
        self.received = received
    }
}

/// The statements ``AttachmentRules`` decide with, supplied by each storage
/// inside the transaction (or lock) an attachment request runs in.
package protocol AttachmentQueries {
    /// How this storage's statements fail.
    associatedtype Failure: Error

    /// The size of `content` when the server holds all of it, else `nil`.
    func storedSize(of content: ContentHash) throws(Failure) -> Int64?
    /// Whether `user` uploaded all of `content` (and the server still holds it).
    func hasUploaded(_ content: ContentHash, user: String) throws(Failure) -> Bool
    /// Whether a live row `user` can see (their personal rows, the rows of
    /// shared spaces they are a member of) refers to `content`.
    func isReferenced(_ content: ContentHash, byRowVisibleTo user: String) throws(Failure) -> Bool
    /// `user`'s unfinished upload of `content`, if any.
    func unfinishedUpload(of content: ContentHash, user: String) throws(Failure) -> UnfinishedUpload?
    /// What `user`'s attachments count against their quota: the sizes of
    /// the stored contents they uploaded whole plus the declared sizes of
    /// their unfinished uploads.
    func attachmentBytesCharged(to user: String) throws(Failure) -> Int64
}

/// What the server does with one upload request that passed the checks
/// of ``AttachmentRules/upload(content:size:offset:count:user:limits:_:)``.
package enum UploadStep: Sendable, Hashable {
    /// The caller may read the content already: nothing is kept, and the
    /// answer is `{"received": size, "stored": true}`.
    case alreadyReadable(size: Int64)
    /// A new upload starts at offset 0 (replacing, when `replacing`, an
    /// unfinished one that declared another size).
    case start(replacing: Bool)
    /// The chunk goes on after the `received` bytes kept.
    case append(received: Int64)
}

/// The decision on one upload request.
package enum UploadDecision: Sendable, Hashable {
    /// Go on with this step.
    case proceed(UploadStep)
    /// Refused with an attachment refusal (409, 413, 422); nothing is kept.
    case refused(AttachmentRefusal)
    /// A malformed request (400 `bad_request`), with the reason.
    case malformed(String)
}

/// The attachment rules of journals/PROTOCOL.md ("Attachments"), written
/// once over ``AttachmentQueries``: `sync-server`'s SQLite and PostgreSQL
/// storages and the in-memory reference server decide with these and add
/// only where the bytes live, their transactions and their locks.
package enum AttachmentRules {
    /// The size of `content` when `user` may read it: the server holds all
    /// of it, and `user` uploaded it whole or can see a live row referring
    /// to it. `nil` otherwise, the same whether or not it is stored, so no
    /// one learns what another user stored by asking for its hash.
    package static func readableSize<Queries: AttachmentQueries>(of content: ContentHash, user: String,
                                                                 _ queries: Queries) throws(Queries.Failure) -> Int64? {
        // Nothing to protect and nothing to upload: everyone may read no bytes.
        if content == .empty { return 0 }
        guard let size = try queries.storedSize(of: content) else { return nil }
        if try queries.hasUploaded(content, user: user) { return size }
        return try queries.isReferenced(content, byRowVisibleTo: user) ? size : nil
    }

    /// The answer to one entry of `POST /v1/attachments/status`: stored when
    /// `user` may read it, else the bytes of `user`'s own unfinished upload
    /// of it (0 when none, or when that upload declared another size: an
    /// upload of the asked size starts over).
    package static func status<Queries: AttachmentQueries>(of request: AttachmentStatusRequest, user: String,
                                                           _ queries: Queries) throws(Queries.Failure) -> AttachmentStatus {
        if try readableSize(of: request.content, user: user, queries) != nil {
            return AttachmentStatus(content: request.content, stored: true, received: 0)
        }
        let unfinished = try queries.unfinishedUpload(of: request.content, user: user)
        let received = unfinished.map { $0.size == request.size ? $0.received : 0 } ?? 0
        return AttachmentStatus(content: request.content, stored: false, received: received)
    }

    /// Why an upload's head is malformed, or `nil`: a negative size or
    /// offset, an empty body, or the body running past the declared size.
    package static func malformation(size: Int64, offset: Int64, count: Int) -> String? {
        if size < 0 { return "\(size) is not a content size" }
        if offset < 0 { return "\(offset) is not an offset" }
        if count == 0 { return "an upload's body holds 1 byte to \(ProtocolLimits.maximumAttachmentChunkBytes) bytes, not none" }
        if count > ProtocolLimits.maximumAttachmentChunkBytes {
            return "an upload's body holds at most \(ProtocolLimits.maximumAttachmentChunkBytes) bytes, not \(count)"
        }
        let (end, overflow) = offset.addingReportingOverflow(Int64(count))
        if overflow || end > size { return "bytes \(offset) to \(offset + Int64(count)) run past the content's size \(size)" }
        return nil
    }

    /// Decides one upload request of `count` bytes at `offset` of
    /// `content` (declared `size`) by `user`, before any byte is kept.
    /// The chunk's own hash is checked by the caller first (422
    /// `chunk_mismatch`); the whole content's hash when the last byte has
    /// arrived (422 `content_mismatch`).
    ///
    /// - A malformed head (``malformation(size:offset:count:)``) is 400.
    /// - A size over ``AttachmentLimits/maximumContentBytes`` is 413 `too_large`.
    /// - A content the caller may read already is answered as stored, keeping nothing.
    /// - Offset 0 of a content without an unfinished upload of the same size
    ///   starts one, unless it would take the caller past their quota (413
    ///   `quota_exceeded`); an upload that declared another size is
    ///   replaced by it. Any other offset than the upload's `received` is
    ///   409 `wrong_offset` naming it.
    package static func upload<Queries: AttachmentQueries>(content: ContentHash, size: Int64, offset: Int64, count: Int, user: String,
                                                           limits: AttachmentLimits, _ queries: Queries) throws(Queries.Failure) -> UploadDecision {
        if let problem = malformation(size: size, offset: offset, count: count) { return .malformed(problem) }
        if size > limits.maximumContentBytes {
            return .refused(.tooLarge(reason: "a content of \(size) bytes, this server takes at most \(limits.maximumContentBytes)"))
        }
        if let stored = try readableSize(of: content, user: user, queries) { return .proceed(.alreadyReadable(size: stored)) }
        let unfinished = try queries.unfinishedUpload(of: content, user: user)
        if let unfinished, unfinished.size == size {
            guard offset == unfinished.received else { return .refused(.wrongOffset(received: unfinished.received)) }
            return .proceed(.append(received: unfinished.received))
        }
        guard offset == 0 else { return .refused(.wrongOffset(received: 0)) }
        let charged = try queries.attachmentBytesCharged(to: user) - (unfinished?.size ?? 0)
        let (total, overflow) = charged.addingReportingOverflow(size)
        if overflow || total > limits.quotaBytes {
            return .refused(.quotaExceeded(reason: "\(charged) bytes stored or being uploaded and \(size) more would pass the quota of \(limits.quotaBytes)"))
        }
        return .proceed(.start(replacing: unfinished != nil))
    }

    /// The bytes a download of `length` from `offset` answers with, for a
    /// content of `size`: never past the end. `nil` for an offset past the end (400).
    package static func downloadRange(offset: Int64, length: Int, size: Int64) -> Range<Int64>? {
        guard offset >= 0, offset <= size else { return nil }
        return offset..<min(size, offset + Int64(max(0, length)))
    }

    /// The push rule (journals/PROTOCOL.md, "Pushing a record that refers
    /// to a content"): a create or update whose fields refer to a content
    /// the caller may not read is `rejected`, not permanently, naming the
    /// first such content (in `contents`' order). `nil` when every one is readable.
    package static func missingContent<Queries: AttachmentQueries>(in contents: some Sequence<ContentHash>, user: String,
                                                                   _ queries: Queries) throws(Queries.Failure) -> MutationOutcome? {
        var checked = Set<ContentHash>()
        for content in contents where checked.insert(content).inserted {
            if try readableSize(of: content, user: user, queries) == nil {
                return .rejected(reason: MissingContentRefusal.reason(content), permanent: false)
            }
        }
        return nil
    }

    /// The contents `fields` refer to, in the order a push is judged by:
    /// fields by the UTF-8 bytes of their names (the stored encoding's
    /// order), attachments within a value in its order.
    package static func contents(of fields: [String: FieldValue]) -> [ContentHash] {
        guard fields.values.contains(where: \.holdsAttachment) else { return [] }
        return fields.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            .flatMap { orderedContents(of: $0.value) }
    }

    /// The contents inside one value, object members by the UTF-8 bytes of their names.
    private static func orderedContents(of value: FieldValue) -> [ContentHash] {
        switch value {
        case .attachment(let attachment): return [attachment.content]
        case .array(let elements): return elements.flatMap(orderedContents(of:))
        case .object(let members):
            return members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.flatMap { orderedContents(of: $0.value) }
        default: return []
        }
    }
}

extension FieldValue {
    /// Whether an attachment lies anywhere inside the value (cheaper than
    /// collecting them when, as for most fields, there is none).
    package var holdsAttachment: Bool {
        switch self {
        case .attachment: return true
        case .array(let elements): return elements.contains(where: \.holdsAttachment)
        case .object(let members): return members.values.contains(where: \.holdsAttachment)
        default: return false
        }
    }
}
