import SyncJournalCore
import SyncJournalProtocol

/// Files that belong to records: added beside the journal before an edit
/// refers to them, read back by path, kept while anything refers to them.
extension LocalStore {
    /// The attachment store, made on first use.
    package var attachmentStore: AttachmentStore {
        if let made = attachmentStoreIfMade { return made }
        let made = AttachmentStore(journalPath: path, system: options.creatingSystem)
        attachmentStoreIfMade = made
        return made
    }

    /// Copies the file at `path` beside the journal and returns the
    /// attachment to set as a field. The copy is written, synced and named
    /// by its SHA-256 (its directory synced too) before this returns, so the
    /// edit that refers to it can never outlive it; the same bytes added
    /// twice are kept once. The engine uploads it before it pushes the edit.
    ///
    /// ```swift
    /// let photo = try await store.attach(fileAt: "/tmp/tapas.jpg", mediaType: "image/jpeg")
    /// try await store.update("pin", id: "p1", changes: ["photo": .attachment(photo)])
    /// ```
    ///
    /// - Throws: ``StoreError/invalidAttachment(reason:)`` for a media type
    ///   that is not `type/subtype`; ``StoreError/attachmentFile(_:)`` when
    ///   the file cannot be read or the copy written; the errors of a store
    ///   that cannot write (read-only, suspended, closed).
    public func attach(fileAt path: String, mediaType: String = "application/octet-stream") async throws(StoreError) -> Attachment {
        try checkWritable()
        return try await attachmentStore.add(fileAt: path, mediaType: mediaType)
    }

    /// Keeps `bytes` beside the journal as an attachment, as ``attach(fileAt:mediaType:)`` does a file.
    ///
    /// ```swift
    /// let note = try await store.attach(Array("hello".utf8), mediaType: "text/plain")
    /// ```
    public func attach(_ bytes: [UInt8], mediaType: String = "application/octet-stream") async throws(StoreError) -> Attachment {
        try checkWritable()
        return try await attachmentStore.add(bytes, mediaType: mediaType)
    }

    /// The path of the attachment's file on this device, or `nil` when it is
    /// not here (a record pulled from the server whose file was not
    /// downloaded yet, or was evicted from the cache): then
    /// `SyncEngine.download(_:)` fetches it. Read the file; do not change it.
    ///
    /// ```swift
    /// if let path = try await store.attachmentFile(photo) { show(imageAt: path) }
    /// ```
    public func attachmentFile(_ attachment: Attachment) async throws(StoreError) -> String? {
        try checkReadable()
        return try await attachmentStore.file(of: attachment.content)
    }

    /// Every content a record, a queued edit, a conflict or a rejection of
    /// this store refers to: what upkeep must keep.
    package func referencedContents() -> Set<ContentHash> {
        var contents = Set<ContentHash>()
        func add(_ fields: [String: FieldValue]) {
            for value in fields.values { for attachment in value.attachments { contents.insert(attachment.content) } }
        }
        for key in state.snapshot.keys { if let fields = state.visibleFields(of: key) { add(fields) } }
        for entry in state.outbox.operations { add(entry.operation.fields) }
        for conflict in state.conflicts {
            add(conflict.operation.fields)
            if let replacement = conflict.resolution.replacement { add(replacement.fields) }
        }
        for rejection in state.rejections { add(rejection.operation.fields) }
        return contents
    }

    /// Every content a queued edit refers to: kept whatever the cache holds,
    /// since the edit may have to upload it again.
    package func queuedContents() -> Set<ContentHash> {
        var contents = Set<ContentHash>()
        for entry in state.outbox.operations {
            for value in entry.operation.fields.values { for attachment in value.attachments { contents.insert(attachment.content) } }
        }
        return contents
    }

    /// Removes attachment files nothing refers to once the grace period
    /// (``Options/attachmentGrace``) has passed, and evicts the least
    /// recently used cached files past ``Options/attachmentCacheBytes``.
    /// Files the server does not hold yet are never evicted, and a file a
    /// queued edit refers to is never removed nor evicted. Nothing runs it
    /// on its own: an app runs it when it likes (after a sync, say).
    ///
    /// ```swift
    /// try await store.collectAttachments()
    /// ```
    @discardableResult
    public func collectAttachments() async throws(StoreError) -> AttachmentCollection {
        try checkReadable()
        if attachmentStoreIfMade == nil, !hasAttachmentDirectory() { return AttachmentCollection() }
        let store = attachmentStore
        let grace = options.attachmentGrace.components
        let graceMilliseconds = grace.seconds * 1000 + grace.attoseconds / 1_000_000_000_000_000
        let collected = try await store.collect(referenced: referencedContents(), queued: queuedContents(),
                                                now: options.clock.wallTimeMilliseconds, grace: graceMilliseconds,
                                                cacheLimit: options.attachmentCacheBytes)
        return AttachmentCollection(removed: collected.unreferenced.count, evicted: collected.evicted.count)
    }

    /// How many attachments added here the server has not confirmed (0 when
    /// the store has none, or its attachment directory cannot be read).
    package func attachmentsAwaitingUpload() async -> Int {
        if attachmentStoreIfMade == nil, !hasAttachmentDirectory() { return 0 }
        // A count for a status bar: a directory that cannot be read shows none, and the upload that needs it reports why.
        do { return try await attachmentStore.pendingCount() } catch { return 0 }
    }

    /// Whether the journal has an attachment directory beside it (so upkeep need not make one).
    private func hasAttachmentDirectory() -> Bool {
        let names = (try? options.system.directoryEntries(FileIO.directory(of: path))) ?? nil
        let name = String((path + ".attachments").split(separator: "/").last ?? "")
        return names?.contains(name) ?? true
    }
}

/// What ``LocalStore/collectAttachments()`` removed.
public struct AttachmentCollection: Sendable, Hashable {
    /// Files nothing referred to any more, past the grace period.
    public var removed: Int = 0
    /// Cached files removed to bring the cache under its limit.
    public var evicted: Int = 0

    /// A count of removed and evicted files.
    public init(removed: Int = 0, evicted: Int = 0) {
        self.removed = removed
        self.evicted = evicted
    }
}
