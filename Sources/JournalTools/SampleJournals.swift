import Foundation
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting

/// The sample and golden journals under `journals/`, made deterministically
/// (fixed ids, generations and clocks) by `journal-crash samples DIR`, so the
/// same command reproduces them byte for byte.
public enum SampleJournals {
    /// A file the generator writes, relative to the output directory.
    public struct File: Sendable, Hashable {
        /// Path relative to the output directory, e.g. `samples/healthy.journal`.
        public var relativePath: String
        /// What it shows.
        public var purpose: String
    }

    /// Everything ``write(into:)`` produces.
    public static let files: [File] = [
        File(relativePath: "samples/healthy.journal", purpose: "a clean journal of pin and note edits"),
        File(relativePath: "samples/torn-tail.journal", purpose: "the healthy journal plus the first 40 bytes of one more record: a crash mid-append"),
        File(relativePath: "samples/corrupt-middle.journal", purpose: "the healthy journal with one payload bit of record 3 flipped"),
        File(relativePath: "samples/store.journal", purpose: "a local store's journal: pulled pages, edits the compactor merged, sent markers, a withdrawn hand-over, an acknowledgement, failures, a rejection, conflicts"),
        File(relativePath: "samples/store-checkpoint.journal", purpose: "the store journal checkpointed into its next generation, then one more edit, sent"),
        File(relativePath: "golden/v1-all-types.journal", purpose: "every v1 operation kind and field type, a batch, a skippable unknown type, a salvaged record"),
        File(relativePath: "golden/v1-continued.journal", purpose: "a checkpoint file: continues an earlier generation from sequence 1001 with a checkpoint, then two edits"),
    ]

    static let baseTime: Int64 = 1_764_000_000_000  // 2025-11-24T16:00:00Z

    static func header(seed: UInt64, continues: UInt64 = 0, firstSequence: UInt64 = 1) -> JournalHeader {
        var generator = SeededGenerator(seed: seed)
        let id = JournalID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })!
        return JournalHeader(journalID: id, generation: generator.next() | 1, continuesGeneration: continues,
                             firstSequence: firstSequence, createdAtMilliseconds: baseTime)
    }

    /// The edits of the healthy sample: two devices' worth of pins and notes.
    static func healthyRecords() -> [(RecordType, [UInt8])] {
        var generator = SeededGenerator(seed: 2)
        func op(_ kind: OperationKind, _ entity: String, _ id: String, _ fields: [String: FieldValue] = [:],
                base: Int64? = nil, at minute: Int64) -> JournalOperation {
            JournalOperation(id: .random(using: &generator), kind: kind, entity: entity, recordID: id, fields: fields,
                             baseUpdatedAt: base, queuedAt: baseTime + minute * 60_000)
        }
        let serverStamp: Int64 = 1_763_990_000_000
        let ops: [(RecordType, [UInt8])] = [
            (.operation, op(.create, "pin", "p-cafe", ["name": .string("Café Kranz"), "lat": .double(48.1371), "lon": .double(11.5754), "tags": .stringSet(["coffee", "breakfast"])], at: 1).encoded()),
            (.operation, op(.create, "pin", "p-museum", ["name": .string("Deutsches Museum"), "lat": .double(48.1299), "lon": .double(11.5834)], at: 2).encoded()),
            (.operation, op(.update, "pin", "p-tapas", ["name": .string("Tapas Bar Sol"), "visited": .bool(true)], base: serverStamp, at: 3).encoded()),
            (.operation, op(.delete, "pin", "p-museum", at: 4).encoded()),
            (.operationBatch, JournalOperation.encodeBatch([
                op(.create, "note", "n-1", ["text": .string("Bring the walking map"), "pinned": .bool(false), "rank": .int(3)], at: 5),
                op(.update, "note", "n-0", ["text": .string("Tram 18 from Sendlinger Tor")], base: serverStamp + 17, at: 5),
            ])),
            (.operation, op(.delete, "pin", "p-old", base: serverStamp + 42, at: 6).encoded()),
        ]
        return ops
    }

    /// Events as a ``LocalStore`` journals them, with the compaction each
    /// edit causes and the base it takes, made from a fixed seed so the
    /// operation ids are the same on every run.
    struct StoreEventRecorder {
        var state = StoreState()
        var events: [StoreEvent] = []
        var generator = SeededGenerator(seed: 7)

        /// Journals an edit: the base the store would give it, and the compactor's steps.
        @discardableResult
        mutating func edit(_ kind: OperationKind, _ entity: String, _ id: String, _ fields: [String: FieldValue] = [:],
                           at minute: Int64) -> OperationID {
            let key = RecordKey(kind: entity, id: id)
            let operation = JournalOperation(id: .random(using: &generator), kind: kind, entity: entity, recordID: id, fields: fields,
                                             baseUpdatedAt: kind == .create ? nil : state.base(for: key),
                                             queuedAt: SampleJournals.baseTime + minute * 60_000)
            var probe = state
            probe.apply(.edit(operation, compaction: []))
            record(.edit(operation, compaction: Compactor.steps(for: operation, in: probe.outbox)))
            return operation.id
        }

        mutating func record(_ event: StoreEvent) {
            state.apply(event)
            events.append(event)
        }

        var records: [(RecordType, [UInt8])] { events.map { ($0.recordType, $0.encodedPayload()) } }
    }

    static let storeServerStamp: Int64 = 1_763_990_000_000

    /// The store sample: what a day of one device's sync journals.
    static func storeEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz"), "lat": .double(48.1371), "lon": .double(11.5754)], updatedAt: s + 10),
            ServerRow(kind: "pin", id: "p-museum", fields: ["name": .string("Museum")], updatedAt: s + 11),
            ServerRow(kind: "pin", id: "p-old", updatedAt: s + 12, deletedAt: s + 12),
        ], cursor: PullCursor(updatedAt: s + 12, id: "p-old")))
        store.record(.pulled(kind: "note", rows: [
            ServerRow(kind: "note", id: "n-0", fields: ["text": .string("Tram 18")], updatedAt: s + 20),
        ], cursor: PullCursor(updatedAt: s + 20, id: "n-0")))
        // Two updates, neither sent: merged into the first, with its base.
        let visit = store.edit(.update, "pin", "p-cafe", ["visited": .bool(true)], at: 1)
        store.edit(.update, "pin", "p-cafe", ["rating": .int(5)], at: 2)
        // A create and an update, neither sent: one create.
        let note = store.edit(.create, "note", "n-1", ["text": .string("Bring the walking map")], at: 3)
        store.edit(.update, "note", "n-1", ["pinned": .bool(true)], at: 3)
        // A create never sent, then a delete: both vanish.
        store.edit(.create, "pin", "p-tapas", ["name": .string("Tapas Bar Sol")], at: 4)
        store.edit(.delete, "pin", "p-tapas", at: 5)
        store.record(.sent([visit, note]))
        // The create is sent: this update queues behind it.
        store.edit(.update, "note", "n-1", ["rank": .int(3)], at: 6)
        store.record(.acknowledged([Acknowledgement(operationID: note, row: ServerRow(kind: "note", id: "n-1", fields: [
            "text": .string("Bring the walking map"), "pinned": .bool(true)], updatedAt: s + 30))]))
        store.record(.failed(visit, reason: "HTTP 503", permanent: false))
        let rename = store.edit(.update, "pin", "p-museum", ["name": .string("Deutsches Museum")], at: 7)
        // A create sent, then a delete: the delete stays queued behind it (seed 003).
        let bar = store.edit(.create, "pin", "p-bar", ["name": .string("Bar Centrale")], at: 8)
        store.record(.sent([rename, bar]))
        store.edit(.delete, "pin", "p-bar", at: 9)
        store.record(.conflicted(rename, server: ServerRow(kind: "pin", id: "p-museum", fields: ["name": .string("Museum (closed)")], updatedAt: s + 40)))
        let tram = store.edit(.update, "note", "n-0", ["text": .string("Tram 18 from Sendlinger Tor")], at: 10)
        store.record(.sent([tram]))
        store.record(.failed(tram, reason: "HTTP 403: not your note", permanent: true))
        let gone = store.edit(.delete, "note", "n-0", at: 11)
        store.record(.sent([gone]))
        store.record(.conflicted(gone, server: nil))
        // Handed to a transport that turned out to be offline: withdrawn, unsent again.
        let offline = store.edit(.update, "pin", "p-museum", ["note": .string("closed on Mondays")], at: 12)
        store.record(.sent([offline]))
        store.record(.withdrawn([offline]))
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-new", fields: ["name": .string("Viktualienmarkt"), "tags": .stringSet(["market", "food"])], updatedAt: s + 50),
        ], cursor: PullCursor(updatedAt: s + 50, id: "p-new")))
        return store
    }

    /// The checkpoint of the store sample's state, then one more edit, sent.
    static func storeCheckpointRecords() -> [(RecordType, [UInt8])] {
        var store = storeEvents()
        let parts = store.state.checkpointParts().map { StoreEvent.checkpoint($0) }
        store.events = []
        let visit = store.edit(.update, "pin", "p-new", ["visited": .bool(true)], at: 13)
        store.record(.sent([visit]))
        return parts.map { ($0.recordType, $0.encodedPayload()) } + store.records
    }

    static func goldenRecords() -> [(RecordType, [UInt8])] {
        var generator = SeededGenerator(seed: 3)
        func op(_ kind: OperationKind, _ entity: String, _ id: String, _ fields: [String: FieldValue] = [:],
                base: Int64? = nil, at: Int64) -> JournalOperation {
            JournalOperation(id: .random(using: &generator), kind: kind, entity: entity, recordID: id, fields: fields,
                             baseUpdatedAt: base, queuedAt: at)
        }
        let everyType: [String: FieldValue] = [
            "null": .null, "false": .bool(false), "true": .bool(true),
            "int": .int(-1234567890123), "intMax": .int(.max), "intMin": .int(.min),
            "double": .double(-2.5e-300), "zero": .double(-0.0),
            "string": .string("grüße, 世界 🚲 \"quoted\"\n"), "empty": .string(""),
            "bytes": .bytes([0, 1, 2, 0xFE, 0xFF]), "set": .stringSet(["b", "a", "ä", ""]), "emptySet": .stringSet([]),
        ]
        var salvaged = ByteWriter()
        salvaged.writeUInt64(4242)
        salvaged.writeUInt64(77)
        salvaged.writeUInt16(RecordType.operation.rawValue)
        salvaged.writeBytes(op(.delete, "pin", "p-lost", base: 5, at: 6).encoded())
        let idOf64Bytes = String(repeating: "x", count: 63) + "y"
        return [
            (.operation, op(.create, "everything", "r-1", everyType, at: baseTime).encoded()),
            (.operation, op(.update, "everything", "r-2", ["int": .int(0)], base: 0, at: baseTime + 1).encoded()),
            (.operation, op(.update, "everything", "r-3", ["string": .string("x")], base: -1, at: -5).encoded()),
            (.operation, op(.delete, "everything", idOf64Bytes, base: .max, at: .max).encoded()),
            (.operation, op(.delete, "everything", "r-5", at: .min).encoded()),
            (.operationBatch, JournalOperation.encodeBatch([
                op(.create, "k", "a", ["v": .int(1)], at: 1),
                op(.update, "k", "a", ["v": .int(2)], at: 2),
                op(.delete, "k", "a", at: 3),
            ])),
            (RecordType(rawValue: 0x8ABC), Array("a later minor version's skippable record".utf8)),
            (.salvaged, salvaged.bytes),
            (.operation, op(.create, "k", "b", ["n": .int(4)], at: 4).encoded()),
        ]
    }

    /// Writes every sample and golden file under `directory` (which is
    /// created if needed), replacing earlier copies.
    public static func write(into directory: String) async throws {
        let manager = FileManager.default
        for sub in ["samples", "golden"] {
            try manager.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        let healthy = directory + "/samples/healthy.journal"
        try await writeJournal(healthy, header: header(seed: 1), records: healthyRecords())

        // Torn tail: the first 40 bytes of one more record, as a crash mid-append leaves them.
        var torn = try Data(contentsOf: URL(fileURLWithPath: healthy))
        let extra = RecordFrame.encode(type: .operation, generation: header(seed: 1).generation,
                                       sequence: UInt64(healthyRecords().count + 1),
                                       payload: JournalOperation(id: OperationID(bytes: Array(repeating: 7, count: 16))!, kind: .delete,
                                                                 entity: "pin", recordID: "p-cafe", queuedAt: baseTime + 7 * 60_000).encoded())
        torn.append(contentsOf: extra.prefix(40))
        try replace(directory + "/samples/torn-tail.journal", with: torn)

        // Corrupt in the middle: flip one bit in the payload of record 3.
        var corrupt = try Data(contentsOf: URL(fileURLWithPath: healthy))
        let third = try JournalReader(path: healthy).readAll().records[2]
        let target = Int(third.offset) + JournalFormat.recordHeaderLength + 20
        corrupt[target] ^= 0x10
        try replace(directory + "/samples/corrupt-middle.journal", with: corrupt)

        let storeRecords = storeEvents().records
        let storeHeader = header(seed: 6)
        try await writeJournal(directory + "/samples/store.journal", header: storeHeader, records: storeRecords)
        // A checkpoint keeps the journal id and continues the generation and the sequence numbers.
        var checkpointHeader = header(seed: 8, continues: storeHeader.generation, firstSequence: UInt64(storeRecords.count + 1))
        checkpointHeader.journalID = storeHeader.journalID
        try await writeJournal(directory + "/samples/store-checkpoint.journal", header: checkpointHeader, records: storeCheckpointRecords())

        let golden = header(seed: 4)
        try await writeJournal(directory + "/golden/v1-all-types.journal", header: golden, records: goldenRecords())
        try await writeJournal(directory + "/golden/v1-continued.journal",
                               header: header(seed: 5, continues: golden.generation, firstSequence: 1001),
                               records: continuedRecords())
    }

    /// A next-generation file: a checkpoint of a small state (two server rows,
    /// one queued operation marked sent, a cursor), then two edits.
    static func continuedRecords() -> [(RecordType, [UInt8])] {
        var generator = SeededGenerator(seed: 6)
        let rows = [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz")], updatedAt: 1_763_990_000_000),
            ServerRow(kind: "pin", id: "p-tapas", fields: ["name": .string("Tapas Bar Sol"), "visited": .bool(true)], updatedAt: 1_763_990_000_005),
        ]
        let queued = OutboxOperation(operation: JournalOperation(id: .random(using: &generator), kind: .update, entity: "pin", recordID: "p-cafe",
                                                                 fields: ["tags": .stringSet(["coffee"])], baseUpdatedAt: 1_763_990_000_000,
                                                                 queuedAt: baseTime), sent: true, attempts: 1, lastError: "timeout")
        let parts: [CheckpointPart] = [
            .rows(rows), .outbox([queued]), .cursors(["pin": PullCursor(updatedAt: 1_763_990_000_005, id: "p-tapas")]),
            .end(rows: 2, operations: 1, conflicts: 0, rejections: 0),
        ]
        return parts.map { (RecordType.checkpoint, StoreEvent.checkpoint($0).encodedPayload()) } + Array(healthyRecords()[1...2])
    }

    private static func replace(_ path: String, with data: Data) throws {
        try? FileManager.default.removeItem(atPath: path)
        try data.write(to: URL(fileURLWithPath: path))
    }

    private static func writeJournal(_ path: String, header: JournalHeader, records: [(RecordType, [UInt8])]) async throws {
        try? FileManager.default.removeItem(atPath: path)
        let writer = try await JournalWriter.open(path: path, options: .init(mode: .bulk, headerForNewJournal: { header }))
        for (type, payload) in records { try await writer.append(type: type, payload: payload) }
        try await writer.close()
        // The lock file is the writer's; samples are plain files.
        try? FileManager.default.removeItem(atPath: path + ".lock")
    }
}
