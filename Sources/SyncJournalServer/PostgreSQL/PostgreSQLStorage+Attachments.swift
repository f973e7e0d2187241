import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalWire

/// Attachments in PostgreSQL: decisions, bookkeeping and bytes in the
/// database, so every server sharing it answers alike. An upload request
/// is one `read committed` transaction under an advisory lock of its
/// user: the decision, the chunk and the new `received` commit together
/// or not at all; the last chunk's transaction also streams the chunks
/// through SHA-256 and stores the content.
extension PostgreSQLStorage: AttachmentStorage {
    /// What an upload's transaction ends with; a refusal found after
    /// something was written (a whole upload thrown away) is thrown after the commit.
    private enum UploadEnd {
        case progress(AttachmentUploadProgress)
        case refused(AttachmentRefusal)
    }

    public func attachmentStatus(user: String, _ contents: [AttachmentStatusRequest]) throws(StorageError) -> [AttachmentStatus] {
        try transaction("begin isolation level repeatable read") { queries throws(StorageError) in
            var statuses: [AttachmentStatus] = []
            for request in contents { statuses.append(try AttachmentRules.status(of: request, user: user, queries)) }
            return statuses
        }
    }

    public func uploadAttachment(user: String, content: ContentHash, size: Int64, offset: Int64,
                                 bytes: [UInt8]) throws(StorageError) -> AttachmentUploadProgress {
        let limits = attachmentLimits
        let now = attachmentClock()
        let end = try transaction("begin isolation level read committed") { queries throws(StorageError) -> UploadEnd in
            try queries.lockAttachments(of: user)
            let from: Int64
            switch try AttachmentRules.upload(content: content, size: size, offset: offset, count: bytes.count, user: user, limits: limits, queries) {
            case .malformed(let reason): throw .badRequest(reason)
            case .refused(let refusal): throw .attachmentRefused(refusal)
            case .proceed(.alreadyReadable(let stored)): return .progress(AttachmentUploadProgress(received: stored, stored: true))
            case .proceed(.start):
                try queries.startUpload(user: user, content: content, size: size, at: now)
                from = 0
            case .proceed(.append(let received)):
                from = received
            }
            try queries.appendChunk(user: user, content: content, offset: from, bytes: bytes, at: now)
            let received = from + Int64(bytes.count)
            guard received == size else { return .progress(AttachmentUploadProgress(received: received, stored: false)) }
            var hasher = SHA256()
            try queries.chunks(owner: user, content: content, overlapping: 0..<size) { _, chunk in hasher.update(chunk) }
            guard hasher.finish() == content.bytes else {
                try queries.removeUpload(user: user, content: content)
                return .refused(.contentMismatch)
            }
            try queries.storeUpload(user: user, content: content, size: size, at: now)
            return .progress(AttachmentUploadProgress(received: size, stored: true))
        }
        switch end {
        case .progress(let progress): return progress
        case .refused(let refusal): throw .attachmentRefused(refusal)
        }
    }

    public func downloadAttachment(user: String, _ request: AttachmentDownloadRequest) throws(StorageError) -> AttachmentDownload {
        try transaction("begin isolation level repeatable read") { queries throws(StorageError) -> AttachmentDownload in
            guard let size = try AttachmentRules.readableSize(of: request.content, user: user, queries) else {
                throw .attachmentRefused(.noSuchContent)
            }
            guard let range = AttachmentRules.downloadRange(offset: request.offset, length: request.length, size: size) else {
                throw .badRequest("offset \(request.offset) is past the content's end, \(size)")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(range.count)
            if !range.isEmpty { try queries.chunks(owner: "", content: request.content, overlapping: range) { position, chunk in
                let from = Int(max(range.lowerBound, position) - position)
                let to = Int(min(range.upperBound, position + Int64(chunk.count)) - position)
                if from < to { bytes += chunk[from..<to] }
            } }
            return AttachmentDownload(bytes: bytes, size: size, bytesHash: ContentHash(bytes: SHA256.digest(bytes))!)
        }
    }

    public func collectAttachments(now: Int64) throws(StorageError) -> AttachmentCollection {
        let (cutoff, overflow) = now.subtractingReportingOverflow(attachmentLimits.graceMilliseconds)
        guard !overflow else { return AttachmentCollection(contents: 0, uploads: 0) }
        return try transaction("begin isolation level read committed") { queries throws(StorageError) in
            try queries.collectAttachments(before: cutoff)
        }
    }

    /// The injected clock, else this server's wall clock (the attachment
    /// tables are dated by the server that writes them).
    public func attachmentClock() -> Int64 { now?() ?? SystemClock.wallClockMilliseconds() }
}
