import SyncJournalCore
import SyncJournalProtocol
import SyncJournalWire

/// Attachments in SQLite: the decisions and the bookkeeping in the
/// database, the bytes in ``AttachmentFiles`` beside it. A chunk is written
/// and synced to its upload's file before a short write transaction
/// records the new `received`, so the database never counts a byte the
/// disk does not hold, and no transaction waits on a file write.
extension SQLiteStorage: AttachmentStorage {
    public func attachmentStatus(user: String, _ contents: [AttachmentStatusRequest]) throws(StorageError) -> [AttachmentStatus] {
        try transaction(immediate: false) { (_, queries) throws(StorageError) in
            var statuses: [AttachmentStatus] = []
            statuses.reserveCapacity(contents.count)
            for request in contents { statuses.append(try AttachmentRules.status(of: request, user: user, queries)) }
            return statuses
        }
    }

    public func uploadAttachment(user: String, content: ContentHash, size: Int64, offset: Int64,
                                 bytes: [UInt8]) throws(StorageError) -> AttachmentUploadProgress {
        let key = UploadKey(user: user, content: content)
        guard uploadsBeingWritten.withLock({ $0.insert(key).inserted }) else {
            // Another request of this very upload is writing: it goes on from where the database has it.
            let received = try transaction(immediate: false) { (_, queries) throws(StorageError) in
                try queries.unfinishedUpload(of: content, user: user)?.received ?? 0
            }
            throw .attachmentRefused(.wrongOffset(received: received))
        }
        defer { _ = uploadsBeingWritten.withLock { $0.remove(key) } }
        let limits = attachmentLimits
        func decide(_ queries: StorageTransaction) throws(StorageError) -> UploadStep {
            switch try AttachmentRules.upload(content: content, size: size, offset: offset, count: bytes.count, user: user, limits: limits, queries) {
            case .malformed(let reason): throw .badRequest(reason)
            case .refused(let refusal): throw .attachmentRefused(refusal)
            case .proceed(let step): return step
            }
        }
        // Most chunks go on an upload this request alone writes (the set
        // above): deciding that needs no write, so no commit to sync.
        var step = try transaction(immediate: false) { (_, queries) throws(StorageError) in try decide(queries) }
        if case .start = step {
            // The decision and a new upload's row in one write transaction, so
            // two uploads of one user cannot both pass the quota.
            step = try writeTransaction { (queries) throws(StorageError) -> UploadStep in
                let step = try decide(queries)
                if case .start = step { try queries.startUpload(user: user, content: content, size: size) }
                return step
            }
        }
        let from: Int64
        switch step {
        case .alreadyReadable(let stored): return AttachmentUploadProgress(received: stored, stored: true)
        case .start: from = 0
        case .append(let received): from = received
        }
        let path = attachmentFiles.uploadPath(user: user, content: content)
        try attachmentFiles.append(bytes, at: from, to: path)
        let received = from + Int64(bytes.count)
        let advanced = try writeTransaction { (queries) throws(StorageError) in
            try queries.advanceUpload(user: user, content: content, from: from, to: received)
        }
        guard advanced else {
            // Collected meanwhile: what was written is not counted anywhere.
            try attachmentFiles.remove(path)
            throw .attachmentRefused(.wrongOffset(received: 0))
        }
        guard received == size else { return AttachmentUploadProgress(received: received, stored: false) }
        try finishUpload(user: user, content: content, size: size, path: path)
        return AttachmentUploadProgress(received: size, stored: true)
    }

    /// Checks a whole upload against its hash, streaming its file, and
    /// stores it: renamed into place (unless the content is held already,
    /// then the upload's file goes), then recorded as stored and uploaded
    /// by `user`. A mismatch throws the upload away.
    private func finishUpload(user: String, content: ContentHash, size: Int64, path: String) throws(StorageError) {
        guard try attachmentFiles.hash(path, length: size) == content else {
            try writeTransaction { (queries) throws(StorageError) in try queries.removeUpload(user: user, content: content) }
            try attachmentFiles.remove(path)
            throw .attachmentRefused(.contentMismatch)
        }
        try contentFilesGate.withLock { (_: inout Void) throws(StorageError) in
            let held = try transaction(immediate: false) { (_, queries) throws(StorageError) in try queries.storedSize(of: content) != nil }
            if !held { try attachmentFiles.install(path, as: content) }
            try writeTransaction { (queries) throws(StorageError) in _ = try queries.storeContent(content, size: size, uploadedBy: user) }
            if held { try attachmentFiles.remove(path) }
        }
    }

    public func downloadAttachment(user: String, _ request: AttachmentDownloadRequest) throws(StorageError) -> AttachmentDownload {
        let size = try transaction(immediate: false) { (_, queries) throws(StorageError) in
            try AttachmentRules.readableSize(of: request.content, user: user, queries)
        }
        guard let size else { throw .attachmentRefused(.noSuchContent) }
        guard let range = AttachmentRules.downloadRange(offset: request.offset, length: request.length, size: size) else {
            throw .badRequest("offset \(request.offset) is past the content's end, \(size)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(range.count))
        do throws(StorageError) {
            // The empty content has no file.
            if !range.isEmpty { try attachmentFiles.read(attachmentFiles.contentPath(request.content), from: range.lowerBound, length: Int64(range.count)) { bytes += $0 } }
        } catch {
            // Collected between the read rule and the file: as if it were never there.
            if case .attachmentFile(let failure) = error, failure.operation == "open", failure.reason == "ENOENT" {
                throw .attachmentRefused(.noSuchContent)
            }
            throw error
        }
        return AttachmentDownload(bytes: bytes, size: size, bytesHash: ContentHash(bytes: SHA256.digest(bytes))!)
    }

    public func collectAttachments(now: Int64) throws(StorageError) -> AttachmentCollection {
        let (cutoff, overflow) = now.subtractingReportingOverflow(attachmentLimits.graceMilliseconds)
        guard !overflow else { return AttachmentCollection(contents: 0, uploads: 0) }
        return try contentFilesGate.withLock { (_: inout Void) throws(StorageError) -> AttachmentCollection in
            let busy = uploadsBeingWritten.withLock { $0 }
            let (uploads, contents) = try writeTransaction { (queries) throws(StorageError) in
                (try queries.removeStaleUploads(before: cutoff, except: busy), try queries.removeUnreferencedContents(before: cutoff))
            }
            for key in uploads { try attachmentFiles.remove(attachmentFiles.uploadPath(user: key.user, content: key.content)) }
            for content in contents { try attachmentFiles.remove(attachmentFiles.contentPath(content)) }
            return AttachmentCollection(contents: contents.count, uploads: uploads.count)
        }
    }

    public func attachmentClock() -> Int64 { now() }

    /// Brings the files in line with the database when the storage opens
    /// (after a crash): each upload's file is cut back to the `received`
    /// the database recorded (an upload whose file holds less starts over),
    /// files no row names are removed, and a content whose file is missing
    /// is forgotten, so its devices are told to upload it again.
    func recoverAttachmentFiles() throws(StorageError) {
        try attachmentFiles.prepare()
        let (uploads, stored) = try transaction(immediate: false) { (_, queries) throws(StorageError) in
            (try queries.unfinishedUploads(), try queries.storedContents())
        }
        var named = Set<String>()
        for upload in uploads {
            let path = attachmentFiles.uploadPath(user: upload.user, content: upload.content)
            named.insert(String(path.dropFirst(attachmentFiles.uploadsDirectory.count + 1)))
            if try attachmentFiles.cutBack(path, to: upload.received) < upload.received {
                try writeTransaction { (queries) throws(StorageError) in
                    try queries.removeUpload(user: upload.user, content: upload.content)
                }
                try attachmentFiles.remove(path)
            }
        }
        for name in try attachmentFiles.uploadFileNames() where !named.contains(name) {
            try attachmentFiles.remove(attachmentFiles.uploadsDirectory + "/" + name)
        }
        let files = Set(try attachmentFiles.contentFiles())
        for content in files.subtracting(stored) { try attachmentFiles.remove(attachmentFiles.contentPath(content)) }
        let missing = stored.subtracting(files)
        if !missing.isEmpty {
            try writeTransaction { (queries) throws(StorageError) in
                for content in missing { try queries.forgetContent(content) }
            }
        }
    }
}
