import SyncJournalCore
import SyncJournalProtocol

/// The files the simulator's users attach to pins: a small fixed pool, so
/// two devices sometimes add the same bytes, from none at all to about
/// 200 KB, each made from its place in the pool alone, so every run (and
/// every replay of a trace) attaches the same contents.
enum SimulationContents {
    /// One file of the pool: its bytes and the attachment value that names them.
    struct File: Sendable {
        /// The bytes.
        var bytes: [UInt8]
        /// What a field holds for them.
        var attachment: Attachment
    }

    /// The sizes of the pool's files: the empty content, a few small ones,
    /// and a few of several upload chunks each.
    static let sizes = [0, 300, 700, 1_500, 4_000, 9_000, 20_000, 40_000, 70_000, 100_000, 130_000, 200_000]

    /// The pool.
    static let files: [File] = sizes.enumerated().map { index, size in
        // A xorshift stream per file: the same bytes in every process.
        var state = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        while bytes.count < size {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes.append(UInt8(truncatingIfNeeded: state))
        }
        let types = ["image/jpeg", "image/png", "application/pdf", "text/plain"]
        let attachment = Attachment(content: ContentHash(bytes: SHA256.digest(bytes))!, size: Int64(size), mediaType: types[index % types.count])
        return File(bytes: bytes, attachment: attachment)
    }

    /// The bytes named by `content`, when it is one of the pool's.
    static func bytes(of content: ContentHash) -> [UInt8]? {
        files.first { $0.attachment.content == content }?.bytes
    }

    /// The largest content the in-memory server takes in a run with
    /// attachments: the pool's largest file is refused, so an upload
    /// refused for good (its edit surfaced as a rejection) happens too.
    static let serverMaximumBytes: Int64 = 160_000

    /// How long the in-memory server keeps a content nothing refers to
    /// after its upload, on the server's clock (a few dozen steps): short,
    /// so collection meets contents uploaded for edits not pushed yet.
    static let serverGraceMilliseconds: Int64 = 40

    /// Bytes an engine sends or fetches per attachment request: several
    /// chunks for the larger files, so a cut upload resumes part way.
    static let chunkBytes = 32 << 10

    /// The bound on a device's cache of files the server holds: under the
    /// pool's total, so upkeep evicts and opening downloads again.
    static let cacheBytes: Int64 = 128 << 10

    /// How long a device keeps a file nothing refers to: a few minutes of
    /// the virtual clock, so upkeep removes some within a run.
    static let graceSeconds: Int64 = 120
}
