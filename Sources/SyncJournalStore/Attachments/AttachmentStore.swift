import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol

/// The files of a store's attachments, in a directory beside its journal
/// (`JOURNAL.attachments/`), each named by the SHA-256 of its bytes, so the
/// same content is kept once:
///
/// - `pending/HEX`: content this device added that the server has not
///   confirmed. Kept until it has, never evicted.
/// - `cached/HEX`: content the server holds (uploaded and confirmed, or
///   downloaded): a cache the app bounds, evicted least recently used.
/// - `incoming/`: files being written. Only a whole, synced file whose
///   bytes hash to its name is renamed out of it, so a crash at any point
///   leaves either no file or a complete one under its name; what is left
///   in `incoming/` is removed when the store next opens it.
///
/// Runs on a thread of its own: copying a large file never holds up the
/// journal's thread nor the Swift concurrency pool.
package actor AttachmentStore {
    /// Where a content stands on this device.
    package enum Place: Sendable, Hashable {
        /// Added here; the server has not confirmed it.
        case pending
        /// The server holds it.
        case cached
    }

    private struct Entry {
        var size: Int64
        var place: Place
        /// When the app or the engine last used it (a counter), for eviction.
        var lastUsed: UInt64
        /// When the store first saw it with nothing referring to it, for the grace period.
        var unreferencedSince: Int64?
    }

    nonisolated let executor = DedicatedThreadExecutor()
    /// Runs the attachment store on its own thread.
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The directory (`JOURNAL.attachments`).
    package nonisolated let directory: String
    private let io: FileIO
    private var entries: [ContentHash: Entry] = [:]
    private var useCounter: UInt64 = 0
    /// Downloads the transport cut, by content: the bytes in `incoming/CONTENT.partial` and their running hash.
    private var partials: [ContentHash: PartialDownload] = [:]
    private var opened = false
    /// Bytes read or written per system call.
    private static let chunk = 1 << 20

    /// The attachment store of the journal at `journalPath`, on `system`. Nothing is touched until it is used.
    package init(journalPath: String, system: any SystemCalls) {
        directory = journalPath + ".attachments"
        io = FileIO(system)
    }

    deinit { executor.shutdown() }

    private func path(_ place: Place, _ content: ContentHash) -> String {
        directory + (place == .pending ? "/pending/" : "/cached/") + content.hex
    }

    private var incoming: String { directory + "/incoming" }

    // MARK: Opening

    /// Makes the directories on first use, removes what an interrupted
    /// write left in `incoming/`, and lists the contents kept.
    private func openIfNeeded() throws(StoreError) {
        guard !opened else { return }
        let parent = FileIO.directory(of: directory)
        var made = false
        for path in [directory, directory + "/pending", directory + "/cached", incoming] {
            do { try io.system.makeDirectory(path); made = true } catch {
                if error.code != .fileExists { throw .attachmentFile(error) }
            }
        }
        do {
            // A directory made now is durable once its parent is synced.
            if made {
                try io.syncDirectory(parent)
                try io.syncDirectory(directory)
            }
            for name in try io.system.directoryEntries(incoming) ?? [] { try io.system.unlink(incoming + "/" + name) }
            for place in [Place.pending, .cached] {
                let folder = directory + (place == .pending ? "/pending" : "/cached")
                for name in try io.system.directoryEntries(folder) ?? [] {
                    guard let content = ContentHash(name) else { continue }
                    // Pending wins over cached: it is the copy still owed to the server.
                    if place == .cached, entries[content] != nil { continue }
                    entries[content] = Entry(size: try size(of: folder + "/" + name), place: place, lastUsed: 0, unreferencedSince: nil)
                }
            }
        } catch {
            throw .attachmentFile(error)
        }
        opened = true
    }

    private func size(of path: String) throws(SystemError) -> Int64 {
        let fd = try io.system.open(path, [.readOnly], 0)
        defer { try? io.system.close(fd) }
        do { return try io.system.fileSize(fd) } catch { throw error.at(path) }
    }

    // MARK: Adding

    /// Copies the file at `source` in as a pending content: hashed while it
    /// is copied, synced, renamed under its name, the directory synced. When
    /// this returns, the content is on disk for good, so an edit that refers
    /// to it may be journaled.
    package func add(fileAt source: String, mediaType: String) throws(StoreError) -> Attachment {
        try openIfNeeded()
        let input: FileDescriptor
        do { input = try io.system.open(source, [.readOnly], 0) } catch { throw .attachmentFile(error.at(source)) }
        defer { try? io.system.close(input) }
        return try write(mediaType: mediaType) { (output, target, hash) throws(SystemError) -> Int64 in
            var offset: Int64 = 0
            while true {
                let bytes = try io.read(input, count: Self.chunk, at: offset, path: source)
                if bytes.isEmpty { return offset }
                hash.update(bytes)
                try io.writeAll(output, bytes, at: offset, path: target)
                offset += Int64(bytes.count)
            }
        }
    }

    /// `bytes` in as a pending content, as ``add(fileAt:mediaType:)``.
    package func add(_ bytes: [UInt8], mediaType: String) throws(StoreError) -> Attachment {
        try openIfNeeded()
        return try write(mediaType: mediaType) { (output, target, hash) throws(SystemError) -> Int64 in
            hash.update(bytes)
            try io.writeAll(output, bytes, at: 0, path: target)
            return Int64(bytes.count)
        }
    }

    /// Writes a new file in `incoming/` through `fill`, then keeps it as pending under its hash.
    private func write(mediaType: String,
                       _ fill: (FileDescriptor, String, inout SHA256) throws(SystemError) -> Int64) throws(StoreError) -> Attachment {
        let probe = Attachment(content: ContentHash(bytes: [UInt8](repeating: 0, count: 32))!, size: 0, mediaType: mediaType)
        if let problem = probe.problem { throw .invalidAttachment(reason: problem) }
        let target = incoming + "/adding"
        var hash = SHA256()
        let size: Int64
        do throws(SystemError) {
            let output = try io.system.open(target, [.readWrite, .create, .truncate], 0o600)
            do throws(SystemError) {
                size = try fill(output, target, &hash)
                try io.system.fsync(output)
            } catch {
                try? io.system.close(output)
                try? io.system.unlink(target)
                throw error.at(target)
            }
            try io.system.close(output)
        } catch {
            throw .attachmentFile(error)
        }
        let content = ContentHash(bytes: hash.finish())!
        let attachment = Attachment(content: content, size: size, mediaType: mediaType)
        do {
            if entries[content] != nil {
                // The same bytes are here already: one copy.
                try io.system.unlink(target)
            } else {
                try io.system.rename(target, path(.pending, content))
                try io.syncDirectory(directory + "/pending")
                entries[content] = Entry(size: size, place: .pending, lastUsed: nextUse(), unreferencedSince: nil)
            }
        } catch {
            throw .attachmentFile(error)
        }
        touch(content)
        return attachment
    }

    // MARK: Reading

    private func nextUse() -> UInt64 {
        useCounter += 1
        return useCounter
    }

    private func touch(_ content: ContentHash) {
        if entries[content] != nil { entries[content]!.lastUsed = nextUse() }
    }

    /// The path of `content`'s file on this device, or `nil` when it is not here.
    package func file(of content: ContentHash) throws(StoreError) -> String? {
        try openIfNeeded()
        guard let entry = entries[content] else { return nil }
        touch(content)
        return path(entry.place, content)
    }

    /// Where `content` stands here, or `nil` when it is not here.
    package func place(of content: ContentHash) throws(StoreError) -> Place? {
        try openIfNeeded()
        return entries[content]?.place
    }

    /// Up to `length` bytes of `content` from `offset`.
    package func read(_ content: ContentHash, offset: Int64, length: Int) throws(StoreError) -> [UInt8] {
        try openIfNeeded()
        guard let entry = entries[content] else { throw .attachmentMissing(content) }
        let file = path(entry.place, content)
        do {
            let fd = try io.system.open(file, [.readOnly], 0)
            defer { try? io.system.close(fd) }
            return try io.read(fd, count: length, at: offset, path: file)
        } catch {
            throw .attachmentFile(error.at(file))
        }
    }

    /// Checks that the file of `content` still hashes to its name: synced
    /// data can rot, and a damaged file is reported, never sent nor shown.
    package func verify(_ content: ContentHash) throws(StoreError) {
        try openIfNeeded()
        guard let entry = entries[content] else { throw .attachmentMissing(content) }
        let file = path(entry.place, content)
        var hash = SHA256()
        do {
            let fd = try io.system.open(file, [.readOnly], 0)
            defer { try? io.system.close(fd) }
            var offset: Int64 = 0
            while true {
                let bytes = try io.read(fd, count: Self.chunk, at: offset, path: file)
                if bytes.isEmpty { break }
                hash.update(bytes)
                offset += Int64(bytes.count)
            }
            if offset != entry.size || hash.finish() != content.bytes { throw StoreError.attachmentDamaged(content, path: file) }
        } catch let error as StoreError {
            throw error
        } catch let error as SystemError {
            throw .attachmentFile(error)
        } catch {
            throw .attachmentDamaged(content, path: file)
        }
    }

    // MARK: The server's copy

    /// The server confirmed it holds `content`: a pending file becomes part
    /// of the cache. Linked into `cached/` and that made durable before the
    /// pending name goes, so a crash leaves the file under one name or both
    /// (then it reads as pending, and the next upload asks the server again),
    /// never under none; a rename across directories could lose both.
    package func confirmStored(_ content: ContentHash) throws(StoreError) {
        try openIfNeeded()
        guard let entry = entries[content], entry.place == .pending else { return }
        do throws(SystemError) {
            do { try io.system.link(path(.pending, content), path(.cached, content)) } catch {
                // A link an earlier confirmation made before a crash: the same file.
                if error.code != .fileExists { throw error }
            }
            try io.syncDirectory(directory + "/cached")
            try io.system.unlink(path(.pending, content))
            try io.syncDirectory(directory + "/pending")
        } catch {
            throw .attachmentFile(error)
        }
        entries[content]!.place = .cached
    }

    /// Keeps downloaded bytes of `content`: `fill` gives them in order from
    /// the offset asked (each piece hashed as it comes); the file is kept
    /// only whole, synced and hashing to its name. A download the transport
    /// cut keeps what arrived in `incoming/`, so the next download of the
    /// content goes on from there (in this process; a restart clears
    /// `incoming/` and starts over). `progress` hears the bytes held after each piece.
    package func download(_ attachment: Attachment,
                          progress: @Sendable (Int64) async -> Void = { _ in },
                          _ fill: @Sendable (Int64) async throws(TransportError) -> [UInt8]) async throws(AttachmentDownloadError) -> String {
        do { try openIfNeeded() } catch { throw .store(error) }
        let content = attachment.content
        if let entry = entries[content] {
            touch(content)
            return path(entry.place, content)
        }
        // One partial file per content; the engine runs one download of a content at a time.
        let target = incoming + "/" + content.hex + ".partial"
        var partial = partials.removeValue(forKey: content) ?? PartialDownload()
        if partial.size > attachment.size { partial = PartialDownload() }
        let output: FileDescriptor
        do {
            output = try io.system.open(target, partial.size == 0 ? [.readWrite, .create, .truncate] : [.readWrite], 0o600)
        } catch {
            throw .store(.attachmentFile(error.at(target)))
        }
        do {
            while partial.size < attachment.size {
                let bytes: [UInt8]
                do { bytes = try await fill(partial.size) } catch {
                    // What arrived whole stays for the next attempt.
                    try? io.system.close(output)
                    partials[content] = partial
                    throw AttachmentDownloadError.transport(error)
                }
                guard !bytes.isEmpty, partial.size + Int64(bytes.count) <= attachment.size else { throw AttachmentDownloadError.wrongSize(content) }
                do { try io.writeAll(output, bytes, at: partial.size, path: target) } catch { throw AttachmentDownloadError.store(.attachmentFile(error)) }
                partial.hash.update(bytes)
                partial.size += Int64(bytes.count)
                await progress(partial.size)
            }
            guard partial.hash.finish() == content.bytes else { throw AttachmentDownloadError.damaged(content) }
            do {
                try io.system.fsync(output)
                try io.system.close(output)
                try io.system.rename(target, path(.cached, content))
                try io.syncDirectory(directory + "/cached")
            } catch {
                throw AttachmentDownloadError.store(.attachmentFile(error))
            }
        } catch let failure as AttachmentDownloadError {
            if case .transport = failure { throw failure }
            try? io.system.close(output)
            try? io.system.unlink(target)
            throw failure
        } catch {
            try? io.system.close(output)
            try? io.system.unlink(target)
            throw .damaged(content)
        }
        entries[content] = Entry(size: attachment.size, place: .cached, lastUsed: nextUse(), unreferencedSince: nil)
        return path(.cached, content)
    }

    /// Bytes held of a download of `content` the transport cut (0: none).
    package func partialDownloadSize(of content: ContentHash) -> Int64 { partials[content]?.size ?? 0 }

    /// Whether `content` is here and still owed to the server.
    package func isPending(_ content: ContentHash) throws(StoreError) -> Bool {
        try openIfNeeded()
        return entries[content]?.place == .pending
    }

    /// How many contents added here the server has not confirmed. The
    /// empty content never counts: every server holds it, so it is never uploaded.
    package func pendingCount() throws(StoreError) -> Int {
        try openIfNeeded()
        return entries.reduce(0) { $0 + ($1.value.place == .pending && $1.key != .empty ? 1 : 0) }
    }

    // MARK: Upkeep

    /// What upkeep removed.
    package struct Collection: Sendable, Hashable {
        /// Contents removed because nothing referred to them past the grace period.
        package var unreferenced: [ContentHash] = []
        /// Cached contents evicted to bring the cache under its limit.
        package var evicted: [ContentHash] = []
    }

    /// Removes what is no longer needed: a content nothing in `referenced`
    /// names once `grace` milliseconds passed since the store first saw it
    /// so (never one a queued edit names: those are in `referenced`), then
    /// cached contents, least recently used first, until the cache holds
    /// at most `cacheLimit` bytes. Pending contents are never evicted, nor
    /// cached ones in `queued` (those queued edits refer to): the server
    /// may collect or stop serving a content before the edit that refers to
    /// it arrives, and then this file is the one the edit is uploaded from again.
    package func collect(referenced: Set<ContentHash>, queued: Set<ContentHash> = [], now: Int64, grace: Int64,
                         cacheLimit: Int64) throws(StoreError) -> Collection {
        try openIfNeeded()
        var collection = Collection()
        for (content, entry) in entries.sorted(by: { $0.key < $1.key }) {
            if referenced.contains(content) {
                entries[content]!.unreferencedSince = nil
                continue
            }
            guard let since = entry.unreferencedSince else {
                entries[content]!.unreferencedSince = now
                continue
            }
            if now - since >= grace {
                try remove(content)
                collection.unreferenced.append(content)
            }
        }
        // Files found at open share a use of 0: their names break the tie, so eviction never follows hash order.
        var cached = entries.filter { $0.value.place == .cached && !queued.contains($0.key) }
            .sorted { $0.value.lastUsed != $1.value.lastUsed ? $0.value.lastUsed < $1.value.lastUsed : $0.key < $1.key }
        var total = cached.reduce(Int64(0)) { $0 + $1.value.size }
        while total > cacheLimit, let oldest = cached.first {
            cached.removeFirst()
            try remove(oldest.key)
            total -= oldest.value.size
            collection.evicted.append(oldest.key)
        }
        return collection
    }

    private func remove(_ content: ContentHash) throws(StoreError) {
        guard let entry = entries[content] else { return }
        let file = path(entry.place, content)
        do {
            try io.system.unlink(file)
            try io.syncDirectory(FileIO.directory(of: file))
        } catch {
            throw .attachmentFile(error)
        }
        entries[content] = nil
    }

    /// The contents here, with their place and size, by name.
    package func contents() throws(StoreError) -> [(content: ContentHash, place: Place, size: Int64)] {
        try openIfNeeded()
        return entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value.place, $0.value.size) }
    }
}

/// A download cut part way: how many bytes its partial file holds and their hash so far.
private struct PartialDownload {
    var size: Int64 = 0
    var hash = SHA256()
}
