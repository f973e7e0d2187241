import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol

/// Where ``SQLiteStorage`` keeps attachment bytes: a directory beside the
/// database file (`<database>.attachments/`) holding `uploads/`, one file
/// per unfinished upload (user and content), and `content/<two hex>/<hex>`,
/// one file per content held whole.
///
/// The database decides and the files follow it: an upload's file grows by
/// whole chunks, each written and synced before the database records the
/// new `received`, so after a crash the database's `received` is trusted
/// and the file cut back to it. A finished upload is renamed into place
/// (file synced, renamed, directory synced) before the database records it
/// as stored, so a stored content always has its file.
struct AttachmentFiles: Sendable {
    /// The directory beside the database.
    let root: String
    /// How many bytes are read at once when hashing or copying (the protocol's chunk).
    static let bufferBytes = ProtocolLimits.maximumAttachmentChunkBytes

    /// The store beside the database at `databasePath`.
    init(databasePath: String) {
        root = databasePath + ".attachments"
    }

    /// The directory of unfinished uploads.
    var uploadsDirectory: String { root + "/uploads" }
    /// The directory of contents held whole.
    var contentDirectory: String { root + "/content" }

    /// The file of `user`'s unfinished upload of `content`: the user's name
    /// is hashed, so any name makes a file name.
    func uploadPath(user: String, content: ContentHash) -> String {
        uploadsDirectory + "/" + ContentHash(bytes: SHA256.digest(Array(user.utf8)))!.hex + "-" + content.hex
    }

    /// The directory of the contents whose hex starts as `content`'s does.
    func contentSubdirectory(_ content: ContentHash) -> String { contentDirectory + "/" + String(content.hex.prefix(2)) }

    /// The file of a content held whole.
    func contentPath(_ content: ContentHash) -> String { contentSubdirectory(content) + "/" + content.hex }

    /// Makes the directories that are missing.
    func prepare() throws(StorageError) {
        for directory in [root, uploadsDirectory, contentDirectory] { try makeDirectory(directory) }
    }

    private func makeDirectory(_ path: String) throws(StorageError) {
        do throws(Errno) { try SystemPath.makeDirectory(path) } catch {
            if error != .fileExists { throw Self.failure("mkdir", path, error) }
        }
    }

    static func failure(_ operation: String, _ path: String, _ error: Errno) -> StorageError {
        .attachmentFile(AttachmentFileError(operation: operation, path: path, reason: error.description))
    }

    /// Runs `body` on `path` opened with `flags`, closing it after.
    private func withFile<T>(_ path: String, _ flags: FileOpenFlags, _ body: (Int32) throws(StorageError) -> T) throws(StorageError) -> T {
        let fd: Int32
        do throws(Errno) { fd = try SystemFile.open(path, flags, mode: 0o600) } catch { throw Self.failure("open", path, error) }
        defer { try? SystemFile.close(fd) }
        return try body(fd)
    }

    /// Writes `bytes` at `offset` of an upload's file, after cutting the
    /// file back to `offset` (whatever a crash or a failed write left past
    /// the database's `received`), and syncs it: only then may the
    /// database record the new `received`.
    func append(_ bytes: [UInt8], at offset: Int64, to path: String) throws(StorageError) {
        try withFile(path, [.readWrite, .create]) { fd throws(StorageError) in
            do throws(Errno) {
                try SystemFile.truncate(fd, to: offset)
                var done = 0
                while done < bytes.count {
                    let result: Result<Int, Errno> = bytes.withUnsafeBytes { buffer in
                        do throws(Errno) {
                            return .success(try SystemFile.pwrite(fd, from: UnsafeRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done)))
                        } catch { return .failure(error) }
                    }
                    let count = try result.get()
                    if count <= 0 { throw Errno.ioError }
                    done += count
                }
                try SystemFile.fsync(fd)
            } catch {
                throw Self.failure("write", path, error)
            }
        }
    }

    /// Cuts an upload's file back to `received` (the database's word after
    /// a crash) and returns the file's length before; 0 when there is no file.
    func cutBack(_ path: String, to received: Int64) throws(StorageError) -> Int64 {
        do throws(Errno) {
            let fd = try SystemFile.open(path, .readWrite)
            defer { try? SystemFile.close(fd) }
            let length = try SystemFile.size(fd)
            if length > received {
                try SystemFile.truncate(fd, to: received)
                try SystemFile.fsync(fd)
            }
            return length
        } catch {
            if error == .noSuchFile { return 0 }
            throw Self.failure("truncate", path, error)
        }
    }

    /// The SHA-256 of the first `length` bytes of a file, read a buffer at a
    /// time (a content is never held in memory whole).
    func hash(_ path: String, length: Int64) throws(StorageError) -> ContentHash {
        var hasher = SHA256()
        try read(path, from: 0, length: length) { bytes in hasher.update(bytes) }
        return ContentHash(bytes: hasher.finish())!
    }

    /// Calls `consume` with the bytes of `path` from `offset`, `length` in
    /// all, a buffer at a time. A file shorter than that fails.
    func read(_ path: String, from offset: Int64, length: Int64, _ consume: (ArraySlice<UInt8>) -> Void) throws(StorageError) {
        try withFile(path, .readOnly) { fd throws(StorageError) in
            var buffer = [UInt8](repeating: 0, count: Int(min(Int64(Self.bufferBytes), max(1, length))))
            var position = offset
            let end = offset + length
            while position < end {
                let wanted = Int(min(Int64(buffer.count), end - position))
                let result: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                    do throws(Errno) {
                        return .success(try SystemFile.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<wanted]), at: position))
                    } catch { return .failure(error) }
                }
                let count: Int
                do throws(Errno) { count = try result.get() } catch { throw Self.failure("read", path, error) }
                if count <= 0 { throw .corrupt(table: "attachment file", key: path, reason: "ends at \(position), before \(end)") }
                consume(buffer[0..<count])
                position += Int64(count)
            }
        }
    }

    /// Moves a finished upload's file into place as `content`'s, durably:
    /// the file is synced, renamed, and its new directory synced.
    func install(_ uploadPath: String, as content: ContentHash) throws(StorageError) {
        let directory = contentSubdirectory(content)
        try makeDirectory(directory)
        try withFile(uploadPath, .readOnly) { fd throws(StorageError) in
            do throws(Errno) { try SystemFile.fsync(fd) } catch { throw Self.failure("fsync", uploadPath, error) }
        }
        do throws(Errno) { try SystemFile.rename(uploadPath, to: contentPath(content)) } catch { throw Self.failure("rename", uploadPath, error) }
        try syncDirectory(directory)
        try syncDirectory(contentDirectory)
    }

    private func syncDirectory(_ path: String) throws(StorageError) {
        try withFile(path, [.readOnly, .directory]) { fd throws(StorageError) in
            do throws(Errno) { try SystemFile.fsync(fd) } catch { throw Self.failure("fsync", path, error) }
        }
    }

    /// Removes a file; one already gone is fine.
    func remove(_ path: String) throws(StorageError) {
        do throws(Errno) { try SystemFile.unlink(path) } catch {
            if error != .noSuchFile { throw Self.failure("unlink", path, error) }
        }
    }

    /// The files of unfinished uploads, by name.
    func uploadFileNames() throws(StorageError) -> [String] {
        do throws(Errno) { return try SystemPath.entries(of: uploadsDirectory) } catch { throw Self.failure("list", uploadsDirectory, error) }
    }

    /// The contents that have a file, by hash.
    func contentFiles() throws(StorageError) -> [ContentHash] {
        var found: [ContentHash] = []
        do throws(Errno) {
            for directory in try SystemPath.entries(of: contentDirectory) {
                for name in try SystemPath.entries(of: contentDirectory + "/" + directory) {
                    if let content = ContentHash(name) { found.append(content) }
                }
            }
        } catch {
            throw Self.failure("list", contentDirectory, error)
        }
        return found
    }
}
