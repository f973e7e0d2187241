import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// The edits every workload and baseline writes: about 200 bytes a record,
/// like a real edit (a create of an "item" with a number and a text).
enum Records {
    /// The record size the text is padded to reach (frame header included).
    static let targetFrameBytes = 200

    /// Text padded so a create's frame is ``targetFrameBytes`` long.
    static let text: String = {
        let probe = frame(of: operation(0, text: ""))
        let pad = max(8, targetFrameBytes - probe.count)
        let phrase = "edited on the device while offline; "
        var text = ""
        while text.utf8.count < pad { text += phrase }
        return String(text.utf8.prefix(pad)) ?? text
    }()

    static let stamp: Int64 = 1_764_000_000_000

    /// The fields of edit `n`.
    static func fields(_ n: Int, text: String = Records.text) -> [String: FieldValue] {
        ["n": .int(Int64(n)), "text": .string(text)]
    }

    /// The record id of edit `n` (fixed width, so every record has the same size).
    static func recordID(_ n: Int) -> String {
        let digits = String(n)
        return "r" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
    }

    /// A create of record `n`.
    static func operation(_ n: Int, text: String = Records.text) -> JournalOperation {
        JournalOperation(id: .random(), kind: .create, entity: "item", recordID: recordID(n), fields: fields(n, text: text),
                         baseUpdatedAt: nil, queuedAt: stamp + Int64(n))
    }

    /// The journal frame of an uncompacted edit of `operation`.
    static func frame(of operation: JournalOperation) -> [UInt8] {
        RecordFrame.encode(type: .operation, generation: 1, sequence: 1, horizon: 80,
                           payload: StoreEvent.edit(operation, compaction: []).encodedPayload())
    }

    /// The bytes the raw-disk baselines write per record: a real edit's frame.
    static let rawRecord: [UInt8] = frame(of: operation(123_456))

    /// The outbox row payload of the SQLite baseline: the same fields as text.
    static let sqlitePayload: String = "{\"n\":123456,\"text\":\"\(text)\"}"
}
