import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

// Attachments: a content reaches the server before any edit that refers to
// it, in chunks the server acknowledges one by one, so a cut upload goes on
// from the last acknowledged chunk; a download is kept only whole.
extension SyncEngine {
    /// What the upload step leaves for the push.
    enum UploadStep {
        /// Every content the batch needs is on the server, except these: the
        /// edits that refer to one get its outcome instead of being pushed.
        case ready(blocked: [ContentHash: LocalStore.DeliveryOutcome])
        /// The sync stops here; nothing of the batch was sent.
        case stop(SyncOutcome)
    }

    /// Pushes `batch` after uploading what its edits refer to and the
    /// server lacks. An edit whose content cannot be uploaded (too large
    /// for the server, over the user's quota, damaged or gone on this
    /// device) is answered here and not pushed; the rest of the batch is.
    func push(_ batch: [OutboxOperation], newlyMarked: [OperationID], pushed: inout Int, conflicts: inout Int,
              attempted: inout Set<OperationID>) async -> PushStep {
        let ids = batch.map(\.id)
        let blocked: [ContentHash: LocalStore.DeliveryOutcome]
        switch await uploadContents(of: batch) {
        case .ready(let answers): blocked = answers
        case .stop(let outcome):
            // No mutation left the device: the attempt is undone, none is charged.
            do { try await outbox.withdrawSending(ids, newlyMarked: Set(newlyMarked)) } catch { return .stop(.failed(.store(error))) }
            return .stop(outcome)
        }
        guard !blocked.isEmpty else {
            return await pushMutations(batch, newlyMarked: newlyMarked, pushed: &pushed, conflicts: &conflicts, attempted: &attempted)
        }
        var answered: [(OperationID, LocalStore.DeliveryOutcome)] = []
        var failed: [OutboxOperation] = []
        var rest: [OutboxOperation] = []
        for entry in batch {
            guard let outcome = Self.attachments(of: entry.operation).lazy.compactMap({ blocked[$0.content] }).first else {
                rest.append(entry)
                continue
            }
            answered.append((entry.id, outcome))
            attempted.insert(entry.id)
            if case .failure = outcome { failed.append(entry) }
        }
        let kept: SendingEnd
        do { kept = try await outbox.endSending(answered.map(\.0), outcomes: answered) } catch { return .stop(.failed(.store(error))) }
        backOff(failed, quarantined: kept.quarantined, at: clock.now())
        guard !rest.isEmpty else { return .done }
        return await pushMutations(rest, newlyMarked: newlyMarked, pushed: &pushed, conflicts: &conflicts, attempted: &attempted)
    }

    /// Why an edit is given up whose content the server lacks and this
    /// device does not hold: no upload can bring it back.
    static func unobtainable(_ content: ContentHash) -> String {
        "content \(content.hex) is on neither this device nor the server"
    }

    /// Whether this device holds `content`'s file (pending or cached). A
    /// store that cannot tell says yes: the edit is then retried, not given up.
    func holdsFile(of content: ContentHash) async -> Bool {
        do { return try await outbox.attachmentStore.place(of: content) != nil } catch { return true }
    }

    /// The attachments an edit refers to (none for a delete).
    static func attachments(of operation: JournalOperation) -> [Attachment] {
        guard operation.kind != .delete else { return [] }
        // Field by field in name order: uploads go in the same order every time.
        return operation.fields.keys.sorted().flatMap { operation.fields[$0]!.attachments }
    }

    /// Uploads every content `batch` refers to that this device added and
    /// the server has not confirmed (or that a push found missing on the
    /// server): asks which the server holds, then sends each from the bytes
    /// it has of it, one chunk at a time, and marks it confirmed.
    func uploadContents(of batch: [OutboxOperation]) async -> UploadStep {
        var wanted: [Attachment] = []
        var blocked: [ContentHash: LocalStore.DeliveryOutcome] = [:]
        var seen = Set<ContentHash>()
        let files = await outbox.attachmentStore
        for entry in batch {
            for attachment in Self.attachments(of: entry.operation) {
                let content = attachment.content
                guard content != .empty, seen.insert(content).inserted else { continue }
                let place: AttachmentStore.Place?
                do { place = try await files.place(of: content) } catch { return .stop(.failed(.store(error))) }
                switch place {
                case .pending?: wanted.append(attachment)
                case .cached? where contentsToReupload.contains(content): wanted.append(attachment)
                case nil where contentsToReupload.contains(content):
                    blocked[content] = .refused(reason: Self.unobtainable(content))
                default: break
                }
            }
        }
        guard !wanted.isEmpty else { return .ready(blocked: blocked) }
        if let stop = stopBeforeNextRequest() { return .stop(stop) }
        let statuses: [AttachmentStatus]
        do {
            statuses = try await transport.attachmentStatus(wanted.map { AttachmentStatusRequest(content: $0.content, size: $0.size) })
        } catch {
            if let outcome = Self.uploadOutcome(error) {
                for attachment in wanted { blocked[attachment.content] = outcome }
                return .ready(blocked: blocked)
            }
            return .stop(stopForTransfer(error))
        }
        for (attachment, status) in zip(wanted, statuses) {
            let step = status.stored ? .confirmed : await upload(attachment, from: status.received)
            switch step {
            case .confirmed:
                do { try await files.confirmStored(attachment.content) } catch { return .stop(.failed(.store(error))) }
                contentsToReupload.remove(attachment.content)
            case .blocked(let outcome): blocked[attachment.content] = outcome
            case .stop(let outcome): return .stop(outcome)
            }
        }
        return .ready(blocked: blocked)
    }

    /// How one content's upload ended.
    enum ContentUpload {
        /// The server holds it whole.
        case confirmed
        /// It cannot be uploaded: the edits that refer to it get this outcome.
        case blocked(LocalStore.DeliveryOutcome)
        /// The sync stops.
        case stop(SyncOutcome)
    }

    /// Sends `attachment` from byte `offset`, one chunk a request, each
    /// with its hash. A wrong offset goes on from where the server says; a
    /// chunk the server found damaged is sent again (a few times).
    func upload(_ attachment: Attachment, from offset: Int64) async -> ContentUpload {
        let files = await outbox.attachmentStore
        let content = attachment.content
        var offset = offset
        var chunkBytes = options.attachmentChunkBytes
        var refusalsInARow = 0
        beginTransfer(AttachmentTransfer(content: content, direction: .upload, size: attachment.size, completed: offset))
        defer { endTransfer(content, .upload) }
        while true {
            if let stop = stopBeforeNextRequest() { return .stop(stop) }
            let count = Int(min(Int64(chunkBytes), attachment.size - offset))
            let bytes: [UInt8]
            do throws(StoreError) {
                bytes = try await files.read(content, offset: offset, length: count)
                // A file shorter than its size: cut since it was added.
                if bytes.count != count { throw .attachmentDamaged(content, path: try await files.file(of: content) ?? files.directory) }
            } catch {
                switch error {
                case .attachmentMissing, .attachmentDamaged:
                    return .blocked(.failure(.permanent, reason: "attachment \(content.hex) cannot be uploaded: \(error)"))
                default: return .stop(.failed(.store(error)))
                }
            }
            let chunk = AttachmentChunk(content: content, size: attachment.size, offset: offset, bytes: bytes,
                                        bytesHash: ContentHash(bytes: SHA256.digest(bytes))!)
            let progress: AttachmentUploadProgress
            do {
                progress = try await transport.uploadAttachment(chunk)
                refusalsInARow = 0
            } catch {
                refusalsInARow += 1
                guard refusalsInARow <= Self.uploadRefusalsInARow else { return .stop(stopForTransfer(error)) }
                switch error {
                case .attachmentRefused(.wrongOffset(let received)) where received >= 0 && received < attachment.size:
                    // Another request of the same upload, or one whose reply was lost: go on from the server's end.
                    offset = received
                    continue
                case .attachmentRefused(.chunkMismatch):
                    continue
                case .attachmentRefused(.contentMismatch):
                    // The server holds other bytes than the name says: this device's file may have rotted.
                    do { try await files.verify(content) } catch {
                        if case .attachmentDamaged = error {
                            return .blocked(.failure(.permanent, reason: "attachment \(content.hex) is damaged on this device: \(error)"))
                        }
                        return .stop(.failed(.store(error)))
                    }
                    offset = 0
                    continue
                case .tooLarge where chunkBytes > Self.smallestChunkBytes:
                    // The server takes smaller bodies than this engine sends.
                    chunkBytes = max(Self.smallestChunkBytes, chunkBytes / 2)
                    continue
                default:
                    if let outcome = Self.uploadOutcome(error) { return .blocked(outcome) }
                    return .stop(stopForTransfer(error))
                }
            }
            offset = progress.received
            updateTransfer(content, .upload, completed: offset)
            if progress.stored { return .confirmed }
        }
    }

    /// Refusals in a row (wrong offsets, damaged chunks) after which an upload gives up for this sync.
    static let uploadRefusalsInARow = 4
    /// The smallest chunk an upload falls back to when the server refuses a body as too large.
    static let smallestChunkBytes = 64 << 10

    /// The outcome of an edit whose content the server refuses for good
    /// (too large, over the quota, a server without attachments), or `nil`
    /// when the refusal is for now.
    static func uploadOutcome(_ error: TransportError) -> LocalStore.DeliveryOutcome? {
        switch error {
        case .attachmentRefused(let refusal) where refusal.isPermanent:
            return .refused(reason: "attachment not uploaded: \(refusal)")
        case .permanent(let reason), .tooLarge(let reason):
            return .refused(reason: "attachment not uploaded: \(reason)")
        default:
            return nil
        }
    }

    /// How a sync stops for a transfer that failed for now.
    func stopForTransfer(_ error: TransportError) -> SyncOutcome {
        if let outcome = stopForNow(error) { return outcome }
        switch error {
        case .serverMismatch(let mismatch): return .failed(.serverMismatch(mismatch))
        case .attachmentRefused: return .retryLater(reason: error.description, retryAfter: nil)
        default: return .failed(.transport(error))
        }
    }

    // MARK: Downloads

    /// The path of `attachment`'s file on this device, downloaded from the
    /// server first when it is not here: in chunks, each checked against
    /// its hash, the whole against the content's name before the file is
    /// kept (in the cache the store bounds). Two calls for one content
    /// share one download; a download the connection cut goes on from the
    /// bytes that arrived when asked again.
    ///
    /// ```swift
    /// let path = try await engine.download(photo)
    /// ```
    ///
    /// - Throws: ``AttachmentDownloadError``: the transport's error (offline,
    ///   or ``AttachmentRefusal/noSuchContent`` when this user may not read
    ///   the content or the server does not hold it), damaged or missized
    ///   bytes, or the store's error.
    public func download(_ attachment: Attachment) async throws(AttachmentDownloadError) -> String {
        let content = attachment.content
        if let running = downloads[content] { return try await running.value.get() }
        let task = Task { () -> Result<String, AttachmentDownloadError> in
            do throws(AttachmentDownloadError) { return .success(try await self.fetch(attachment)) } catch { return .failure(error) }
        }
        downloads[content] = task
        defer { downloads[content] = nil }
        return try await task.value.get()
    }

    /// Downloads the files of the prefetched kinds' records that are not
    /// on the device, one after another; one that fails waits for the next
    /// sync (the sync itself ended well, and its outcome stands).
    func prefetchAttachments() async {
        var wanted: [Attachment] = []
        var seen = Set<ContentHash>()
        for kind in options.prefetchedKinds.sorted() {
            let records: [StoreRecord]
            do { records = try await outbox.records(kind, in: nil) } catch { return }
            for record in records {
                for attachment in record.fields.values.flatMap(\.attachments) where seen.insert(attachment.content).inserted {
                    wanted.append(attachment)
                }
            }
        }
        for attachment in wanted {
            if stopBeforeNextRequest() != nil { return }
            do throws(AttachmentDownloadError) { _ = try await download(attachment) } catch {
                // Offline or refused now: the next sync tries again; a store that cannot write stops the rest.
                if case .store = error { return }
                if case .transport(let failure) = error, failure == .offline { return }
            }
        }
    }

    /// One download of `attachment`, its progress in the status.
    private func fetch(_ attachment: Attachment) async throws(AttachmentDownloadError) -> String {
        let files = await outbox.attachmentStore
        let content = attachment.content
        if let path = try await Self.localFile(content, in: files) { return path }
        let transport = self.transport
        let chunkBytes = options.attachmentChunkBytes
        let held = await files.partialDownloadSize(of: content)
        beginTransfer(AttachmentTransfer(content: content, direction: .download, size: attachment.size, completed: held))
        defer { endTransfer(content, .download) }
        return try await files.download(attachment, progress: { [weak self] completed in
            await self?.updateTransfer(content, .download, completed: completed)
        }) { (offset) throws(TransportError) -> [UInt8] in
            var damaged = 0
            while true {
                let part = try await transport.downloadAttachment(content, offset: offset, length: chunkBytes)
                if part.size != attachment.size {
                    throw .transient(reason: "the server holds \(part.size) bytes of content \(content.hex), not \(attachment.size)",
                                     retryAfter: nil)
                }
                if ContentHash(bytes: SHA256.digest(part.bytes)) == part.bytesHash { return part.bytes }
                // Damaged on the way: ask again, a few times.
                damaged += 1
                if damaged >= Self.uploadRefusalsInARow {
                    throw .transient(reason: "chunks of content \(content.hex) from \(offset) keep arriving damaged", retryAfter: nil)
                }
            }
        }
    }

    /// The file of `content` when it is here already.
    private static func localFile(_ content: ContentHash, in files: AttachmentStore) async throws(AttachmentDownloadError) -> String? {
        do { return try await files.file(of: content) } catch { throw .store(error) }
    }

    // MARK: Progress

    func beginTransfer(_ transfer: AttachmentTransfer) {
        statusState.transfers.append(transfer)
        publishStatus()
    }

    func updateTransfer(_ content: ContentHash, _ direction: AttachmentTransfer.Direction, completed: Int64) {
        guard let index = statusState.transfers.firstIndex(where: { $0.content == content && $0.direction == direction }) else { return }
        statusState.transfers[index].completed = completed
        publishStatus()
    }

    func endTransfer(_ content: ContentHash, _ direction: AttachmentTransfer.Direction) {
        statusState.transfers.removeAll { $0.content == content && $0.direction == direction }
        publishStatus()
    }
}
