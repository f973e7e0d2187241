import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The golden journal of format 2.6: records whose fields refer to files.
extension SampleJournals {
    /// The files the 2.6 golden journal's attachments name, by name: fixed
    /// bytes, so each attachment's hash and size are those of bytes a test
    /// can hash again. The journal never holds them.
    package static let attachmentFiles: [String: (mediaType: String, bytes: [UInt8])] = [
        "tapas.jpg": ("image/jpeg", jpeg(seed: 1, length: 1_500)),
        "tapas-retake.jpg": ("image/jpeg", jpeg(seed: 2, length: 2_100)),
        "market.jpg": ("image/jpeg", jpeg(seed: 3, length: 900)),
        "menu.pdf": ("application/pdf", Array("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n".utf8) + pattern(seed: 4, length: 70_000)
            + Array("\n%%EOF\n".utf8)),
        "page-1.png": ("image/png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pattern(seed: 5, length: 300)),
        "page-2.png": ("image/png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pattern(seed: 6, length: 310)),
        "empty.txt": ("text/plain", []),
        "old-receipt.txt": ("text/plain", Array("1 x café con leche 2,10 EUR\n".utf8)),
    ]

    /// A JPEG's start and end markers around `length` bytes of a pattern.
    private static func jpeg(seed: UInt64, length: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + Array("JFIF\u{0}".utf8) + pattern(seed: seed, length: length) + [0xFF, 0xD9]
    }

    private static func pattern(seed: UInt64, length: Int) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// The attachment of the sample file `name`: the SHA-256 and size of its bytes, its media type.
    package static func sampleAttachment(_ name: String) -> Attachment {
        let file = attachmentFiles[name]!
        return Attachment(content: ContentHash(bytes: SHA256.digest(file.bytes))!, size: Int64(file.bytes.count), mediaType: file.mediaType)
    }

    /// A device that pulls notes holding a photo and a receipt, attaches a
    /// photo to a new note, makes a document holding a PDF and one holding
    /// attachments in an array and in a nested object and the empty file;
    /// then replaces a sent note's
    /// photo, replaces and clears the photos of pulled notes, deletes a
    /// pulled note holding a receipt, and is acknowledged with the row
    /// holding the photo it sent.
    static func attachmentEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 27)
        let photo = sampleAttachment("tapas.jpg"), retake = sampleAttachment("tapas-retake.jpg")
        let market = sampleAttachment("market.jpg"), receipt = sampleAttachment("old-receipt.txt")
        store.record(.pulled(kind: "note", rows: [
            ServerRow(kind: "note", id: "n-market", fields: ["title": .string("Market"), "photo": .attachment(market)], updatedAt: s + 1),
            ServerRow(kind: "note", id: "n-receipt", fields: ["title": .string("Receipt"), "scan": .attachment(receipt)], updatedAt: s + 2),
        ], cursor: PullCursor(updatedAt: s + 2, id: "n-receipt")))
        let tapas = store.edit(.create, "note", "n-tapas", ["title": .string("Tapas"), "photo": .attachment(photo)], at: 1)
        store.edit(.create, "doc", "d-menu", ["title": .string("Menu"), "file": .attachment(sampleAttachment("menu.pdf"))], at: 2)
        // Attachments inside an array and a nested object, one content named twice, and the empty file.
        store.edit(.create, "doc", "d-scan", [
            "pages": .array([.attachment(sampleAttachment("page-1.png")), .attachment(sampleAttachment("page-2.png"))]),
            "cover": .object(["caption": .string("Front"), "image": .attachment(sampleAttachment("page-1.png"))]),
            "notes": .attachment(sampleAttachment("empty.txt")),
        ], at: 2)
        store.record(.sent([tapas]))
        // The create is sent: the new photo queues behind it as an update.
        store.edit(.update, "note", "n-tapas", ["photo": .attachment(retake)], at: 3)
        // A pulled note's photo replaced, then cleared: one update, the last value kept.
        store.edit(.update, "note", "n-market", ["photo": .attachment(photo)], at: 4)
        store.edit(.update, "note", "n-market", ["photo": .null], at: 5)
        store.edit(.delete, "note", "n-receipt", at: 6)
        store.record(.acknowledged([Acknowledgement(operationID: tapas, row: ServerRow(
            kind: "note", id: "n-tapas", fields: ["title": .string("Tapas"), "photo": .attachment(photo)], updatedAt: s + 10))]))
        return store
    }

    /// The state `golden/v2.6-attachments.journal` replays to.
    package static func attachmentState() -> StoreState { attachmentEvents().state }
}
