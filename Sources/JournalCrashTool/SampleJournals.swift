import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting

/// The sample and golden journals under `journals/`, made deterministically
/// (fixed ids, generations and clocks) by `journal-crash samples DIR`, so the
/// same command reproduces them byte for byte.
package enum SampleJournals {
    /// A file the generator writes, relative to the output directory.
    package struct File: Sendable, Hashable {
        /// Path relative to the output directory, e.g. `samples/healthy.journal`.
        package var relativePath: String
        /// What it shows.
        package var purpose: String
    }

    /// Everything ``write(into:)`` produces.
    package static let files: [File] = [
        File(relativePath: "samples/healthy.journal", purpose: "a clean journal of pin and note edits"),
        File(relativePath: "samples/torn-tail.journal", purpose: "the healthy journal plus the first 40 bytes of one more record: a crash mid-append"),
        File(relativePath: "samples/corrupt-middle.journal", purpose: "the healthy journal with one payload bit of record 3 flipped"),
        File(relativePath: "samples/store.journal", purpose: "a local store's journal: pulled pages, edits the compactor merged, sent markers, a withdrawn hand-over, an acknowledgement, failures, a rejection, conflicts"),
        File(relativePath: "samples/store-checkpoint.journal", purpose: "the store journal checkpointed into its next generation, then one more edit, sent"),
        File(relativePath: "golden/v1-all-types.journal", purpose: "every v1 operation kind and field type, a batch, a skippable unknown type, a salvaged record"),
        File(relativePath: "golden/v1-continued.journal", purpose: "a checkpoint file: continues an earlier generation from sequence 1001 with a checkpoint, then two edits"),
        File(relativePath: "golden/v1.1-conflicts.journal", purpose: "the 1.1 store records: conflicts resolved by each policy (with base rows and replacements), transient and permanent failures, a quarantine, a release, a discard, a dismissal, a conflict settled by the app, rows forgotten by a resync"),
        File(relativePath: "golden/v1.1-continued.journal", purpose: "the 1.1 state checkpointed: conflicts with their resolutions, base rows, outbox entries with permanent failures and a quarantine; then one edit"),
        File(relativePath: "golden/v2-all-types.journal", purpose: "the records of v1-all-types in format 2, each with its sync horizon, closed by a sync-horizon record"),
        File(relativePath: "golden/v2-conflicts.journal", purpose: "the records of v1.1-conflicts in format 2, closed by a sync-horizon record"),
        File(relativePath: "golden/v2-continued.journal", purpose: "the records of v1.1-continued in format 2, continuing v2-conflicts, closed by a sync-horizon record"),
        File(relativePath: "golden/v2.1-typed-values.journal", purpose: "format 2.1's field values: timestamps, UUIDs, arrays and objects, nested as deep as allowed, in pulled rows, a create and updates"),
        File(relativePath: "golden/v2.1-transactions.journal", purpose: "write transactions (type 0x000F) across kinds, with compaction inside one transaction and against earlier edits, an edit behind a sent one, an acknowledgement"),
        File(relativePath: "golden/v2.3-model-versions.journal", purpose: "format 2.3's model versions: pulled rows with and without one, versioned edits the compactor merged (the highest kept), an unversioned edit, an acknowledgement and a tombstone carrying one"),
        File(relativePath: "golden/v2.4-server-identity.journal", purpose: "format 2.4's server records: an identity learned, a mismatch, a reconciliation's re-uploads (a create, an update, a rename of a sent edit) and the adopted identity, a mismatch behind, and a server without an identity adopted"),
        File(relativePath: "golden/v2.5-shared-spaces.journal", purpose: "format 2.5's shared spaces: spaces described, rows pulled and forgotten in a space, edits and an acknowledgement in a space beside personal ones, and a space lost with a sent and an unsent edit queued in it"),
        File(relativePath: "golden/v2.5-shared-spaces-continued.journal", purpose: "the shared-spaces state checkpointed (checkpoint parts 9 and 10, the lost space's edits as rejections), then an edit in the kept space"),
        File(relativePath: "golden/v2.6-attachments.journal", purpose: "format 2.6's attachments (field tag 12): pulled rows holding photos, a photo on a new note, a document holding a PDF, attachments in an array and a nested object and the empty file, a sent note's photo replaced, a pulled note's photo replaced then cleared, a note holding a receipt deleted, an acknowledgement holding a photo"),
        File(relativePath: "samples/reserved-field.journal", purpose: "the healthy journal plus a record whose reserved field is set: unsupported (read-only), a newer version wrote it"),
        File(relativePath: "samples/unknown-type.journal", purpose: "the healthy journal plus a record of a type this version may not skip: unsupported (read-only)"),
        File(relativePath: "samples/power-cut-batch.journal", purpose: "the healthy journal plus a group commit of three records whose first sectors a power cut lost: a torn tail with records after the damage"),
        File(relativePath: "samples/embedded-frame.journal", purpose: "the healthy journal plus a torn record whose payload carries a frame of this generation: a torn tail, the frame never taken for a record"),
        File(relativePath: "samples/flipped-bit-last.journal", purpose: "the healthy journal with one bit of its last record (the closing sync-horizon record) flipped: corrupt"),
        File(relativePath: "samples/damaged-header.journal", purpose: "the healthy journal with a bit of the header's version flipped: corrupt at offset 0, salvageable"),
    ]

    static let baseTime: Int64 = 1_764_000_000_000  // 2025-11-24T16:00:00Z

    static func header(seed: UInt64, continues: UInt64 = 0, firstSequence: UInt64 = 1,
                       majorVersion: UInt16 = JournalFormat.majorVersion) -> JournalHeader {
        var generator = SeededGenerator(seed: seed)
        let id = JournalID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })!
        return JournalHeader(journalID: id, generation: generator.next() | 1, continuesGeneration: continues,
                             firstSequence: firstSequence, createdAtMilliseconds: baseTime, majorVersion: majorVersion)
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
                           at minute: Int64, modelVersion: Int? = nil, in space: SpaceID = .personal) -> OperationID {
            let key = RecordKey(kind: entity, id: id, space: space)
            let operation = JournalOperation(id: .random(using: &generator), kind: kind, entity: entity, recordID: id, fields: fields,
                                             baseUpdatedAt: kind == .create ? nil : state.base(for: key),
                                             queuedAt: SampleJournals.baseTime + minute * 60_000, modelVersion: modelVersion,
                                             space: space)
            var probe = state
            probe.apply(.edit(operation, compaction: []))
            record(.edit(operation, compaction: Compactor.steps(for: operation, in: probe.outbox)))
            return operation.id
        }

        mutating func record(_ event: StoreEvent) {
            state.apply(event)
            events.append(event)
        }

        /// Journals a write transaction of `edits` as a store decides it:
        /// each checked and given its base against what the ones before it
        /// leave, with the compactor's steps. Returns the operations' ids.
        @discardableResult
        mutating func transaction(_ edits: [(OperationKind, String, String, [String: FieldValue])], at minute: Int64) -> [OperationID] {
            let operations = edits.map { edit in
                JournalOperation(id: .random(using: &generator), kind: edit.0, entity: edit.1, recordID: edit.2, fields: edit.3,
                                 queuedAt: SampleJournals.baseTime + minute * 60_000)
            }
            // The sample's edits all apply: a failure here is a mistake in the sample itself.
            for event in try! LocalStore.transaction(operations, in: state) { record(event) }
            return operations.map(\.id)
        }

        var records: [(RecordType, [UInt8])] { events.map { ($0.recordType, $0.encodedPayload()) } }
    }

    static let storeServerStamp: Int64 = 1_763_990_000_000

    /// The 2.1 golden journal: write transactions across kinds, with the
    /// compaction they cause inside one transaction and against edits queued before it.
    static func transactionEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 21)
        store.record(.pulled(kind: "pin", rows: [
            ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz")], updatedAt: s + 1),
            ServerRow(kind: "pin", id: "p-gone", fields: ["name": .string("Closed shop")], updatedAt: s + 2),
        ], cursor: PullCursor(updatedAt: s + 2, id: "p-gone")))
        let rating = store.edit(.update, "pin", "p-cafe", ["rating": .int(3)], at: 1)
        store.record(.sent([rating]))
        // Three kinds at once: an update behind a sent one (no merge), a create, a delete of a server row.
        store.transaction([(.update, "pin", "p-cafe", ["visited": .bool(true)]),
                           (.create, "trip", "t-lisbon", ["name": .string("Lisbon"), "days": .int(4)]),
                           (.create, "stop", "s-alfama", ["trip": .string("t-lisbon")]),
                           (.delete, "pin", "p-gone", [:])], at: 2)
        // An update of a record created in the same transaction merges into its create; so
        // does an update of the trip created by the transaction before; a create and a delete vanish.
        store.transaction([(.create, "pin", "p-new", ["name": .string("Tapas Bar Sol")]),
                           (.update, "pin", "p-new", ["rating": .int(5)]),
                           (.update, "trip", "t-lisbon", ["days": .int(5)]),
                           (.create, "note", "n-draft", ["text": .string("draft")]),
                           (.delete, "note", "n-draft", [:])], at: 3)
        store.record(.acknowledged([Acknowledgement(operationID: rating,
                                                    row: ServerRow(kind: "pin", id: "p-cafe", fields: ["name": .string("Café Kranz"), "rating": .int(3)],
                                                                   updatedAt: s + 10))]))
        return store
    }

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
        // A create sent, then a delete: the delete stays queued behind it.
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

    /// The 1.1 golden journal: one device meeting each conflict policy and
    /// each failure kind, journaled as a ``LocalStore`` journals them.
    static func conflictEvents() -> StoreEventRecorder {
        let s = storeServerStamp
        var store = StoreEventRecorder()
        store.generator = SeededGenerator(seed: 11)
        func row(_ id: String, _ fields: [String: FieldValue], at stamp: Int64, kind: String = "pin") -> ServerRow {
            ServerRow(kind: kind, id: id, fields: fields, updatedAt: s + stamp)
        }
        /// What the store journals when the server refuses `id`: the policy's resolution.
        func conflict(_ id: OperationID, server: ServerRow?, policy: ConflictPolicy, at minute: Int64, in store: inout StoreEventRecorder) {
            let entry = store.state.outbox.operations.first { $0.id == id }!
            let base = store.state.baseRow(for: entry)
            let operation = entry.operation
            let local: [String: FieldValue]? = operation.kind == .delete ? nil
                : (base?.fields ?? [:]).merging(operation.fields) { _, new in new }
            let input = ConflictInput(operation: operation, base: base, server: server, local: local)
            let resolution = ConflictResolution.resolve(input, policy: policy, newID: .random(using: &store.generator),
                                                        now: SampleJournals.baseTime + minute * 60_000)
            store.record(.conflictResolved(id, server: server, base: base, resolution: resolution))
        }
        store.record(.pulled(kind: "pin", rows: [
            row("p-bar", ["name": .string("Bar Centrale")], at: 1),
            row("p-cafe", ["name": .string("Café Kranz"), "rating": .int(4), "tags": .stringSet(["coffee"])], at: 2),
            row("p-gone", ["name": .string("Closed shop")], at: 3),
            row("p-museum", ["name": .string("Museum"), "hours": .string("9-17")], at: 4),
            row("p-park", ["name": .string("Englischer Garten")], at: 5),
        ], cursor: PullCursor(updatedAt: s + 5, id: "p-park")))
        store.record(.pulled(kind: "note", rows: [row("n-0", ["text": .string("Tram 18")], at: 6, kind: "note")],
                             cursor: PullCursor(updatedAt: s + 6, id: "n-0")))

        // update/update, server wins: the server renamed it too; the local name is lost.
        let rename = store.edit(.update, "pin", "p-bar", ["name": .string("Bar Centrale (Ludwigstraße)")], at: 1)
        // update/update, client wins: the local change is queued again on the server's copy.
        let hours = store.edit(.update, "pin", "p-museum", ["hours": .string("10-18")], at: 2)
        // update/update, merge fields: the tag sets unite, the rating both changed stays the server's.
        let tags = store.edit(.update, "pin", "p-cafe", ["tags": .stringSet(["coffee", "wifi"]), "rating": .int(5)], at: 3)
        // delete/update, custom: the app's resolver keeps the delete.
        let park = store.edit(.delete, "pin", "p-park", at: 4)
        // update/delete, server wins: the server deleted the note; the edit goes with it.
        let note = store.edit(.update, "note", "n-0", ["text": .string("Tram 18 from Sendlinger Tor")], at: 5)
        store.record(.sent([rename, hours, tags, park, note]))
        conflict(rename, server: row("p-bar", ["name": .string("Bar Centrale Milano")], at: 10), policy: .serverWins, at: 6, in: &store)
        conflict(hours, server: row("p-museum", ["name": .string("Deutsches Museum"), "hours": .string("9-17")], at: 11),
                 policy: .clientWins, at: 6, in: &store)
        conflict(tags, server: row("p-cafe", ["name": .string("Café Kranz"), "rating": .int(3), "tags": .stringSet(["cake", "coffee"])], at: 12),
                 policy: .mergeFields, at: 6, in: &store)
        conflict(park, server: row("p-park", ["name": .string("Englischer Garten"), "note": .string("busy")], at: 13),
                 policy: .custom { _ in .delete }, at: 6, in: &store)
        conflict(note, server: nil, policy: .serverWins, at: 6, in: &store)
        store.record(.conflictDismissed(rename))
        // The app settles the note's conflict itself: it keeps its text, so the note is created again.
        let keepNote = JournalOperation(id: .random(using: &store.generator), kind: .create, entity: "note", recordID: "n-0",
                                        fields: ["text": .string("Tram 18 from Sendlinger Tor")], queuedAt: SampleJournals.baseTime + 7 * 60_000)
        store.record(.conflictSettled(note, edit: keepNote, compaction: []))

        // A 503: transient, counted as an attempt only.
        let requeued = store.state.outbox.operations.map(\.id)
        store.record(.sent(requeued))
        store.record(.attemptFailed(requeued[0], kind: .transient, reason: "HTTP 503, retry after 2 s", quarantine: false))
        // A record the server refuses three times is quarantined; the app retries it once and then discards it.
        let poison = store.edit(.update, "pin", "p-gone", ["name": .string("Closed shop!")], at: 7)
        store.record(.sent([poison]))
        store.record(.attemptFailed(poison, kind: .permanent, reason: "HTTP 422: name too loud", quarantine: false))
        store.record(.attemptFailed(poison, kind: .permanent, reason: "HTTP 422: name too loud", quarantine: false))
        store.record(.attemptFailed(poison, kind: .permanent, reason: "HTTP 422: name too loud", quarantine: true))
        store.record(.released(poison))
        store.record(.attemptFailed(poison, kind: .permanent, reason: "HTTP 422: name too loud", quarantine: false))
        store.record(.discarded(poison))
        // An update that matched no row, and no row reads back: deleted or no access, quarantined at once.
        let hidden = store.edit(.update, "pin", "p-gone", ["visited": .bool(true)], at: 8)
        store.record(.sent([hidden]))
        store.record(.attemptFailed(hidden, kind: .deletedOrNoAccess, reason: "update matched no row and none reads back", quarantine: true))
        // A resync after the tombstone horizon: the full re-pull no longer has p-gone.
        store.record(.pulled(kind: "pin", rows: [
            row("p-cafe", ["name": .string("Café Kranz"), "rating": .int(3), "tags": .stringSet(["cake", "coffee"])], at: 12),
        ], cursor: PullCursor(updatedAt: s + 12, id: "p-cafe")))
        store.record(.forgotten(kind: "pin", ids: ["p-gone"]))
        // Still queued: the client-wins and merge replacements (one of them failed once), the park delete.
        store.edit(.create, "pin", "p-new", ["name": .string("Viktualienmarkt")], at: 9)
        return store
    }

    /// The 1.1 state checkpointed into the next generation, then one more edit.
    static func conflictCheckpointRecords() -> [(RecordType, [UInt8])] {
        var store = conflictEvents()
        let parts = store.state.checkpointParts().map { StoreEvent.checkpoint($0) }
        store.events = []
        store.edit(.update, "pin", "p-new", ["visited": .bool(true)], at: 10)
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
    package static func write(into directory: String) async throws {
        let manager = FileManager.default
        for sub in ["samples", "golden"] {
            try manager.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        let healthy = directory + "/samples/healthy.journal"
        try await writeJournal(healthy, header: header(seed: 1), records: healthyRecords())

        // Torn tail: the first 40 bytes of one more record, as a crash mid-append leaves them.
        // It follows the writer's closing sync-horizon record, so its sequence number is the one after that.
        var torn = try Data(contentsOf: URL(fileURLWithPath: healthy))
        let extra = RecordFrame.encode(type: .operation, generation: header(seed: 1).generation,
                                       sequence: try JournalReader(path: healthy).scan().nextSequence, horizon: Int64(torn.count),
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

        // The 1.x golden files, written in 1.x framing exactly as they were first made.
        let golden = header(seed: 4, majorVersion: 1)
        try await writeJournal(directory + "/golden/v1-all-types.journal", header: golden, records: goldenRecords(), mode: .bulk)
        try await writeJournal(directory + "/golden/v1-continued.journal",
                               header: header(seed: 5, continues: golden.generation, firstSequence: 1001, majorVersion: 1),
                               records: continuedRecords(), mode: .bulk)

        let conflicts = header(seed: 12, majorVersion: 1)
        let conflictRecords = conflictEvents().records
        try await writeJournal(directory + "/golden/v1.1-conflicts.journal", header: conflicts, records: conflictRecords, mode: .bulk)
        var continued = header(seed: 13, continues: conflicts.generation, firstSequence: UInt64(conflictRecords.count + 1), majorVersion: 1)
        continued.journalID = conflicts.journalID
        try await writeJournal(directory + "/golden/v1.1-continued.journal", header: continued, records: conflictCheckpointRecords(), mode: .bulk)

        // Format 2: every record type, the conflict history, and a checkpoint file continuing it.
        try await writeJournal(directory + "/golden/v2-all-types.journal", header: header(seed: 14), records: goldenRecords())
        let conflicts2 = header(seed: 16)
        try await writeJournal(directory + "/golden/v2-conflicts.journal", header: conflicts2, records: conflictRecords)
        var continued2 = header(seed: 15, continues: conflicts2.generation, firstSequence: UInt64(conflictRecords.count + 1))
        continued2.journalID = conflicts2.journalID
        try await writeJournal(directory + "/golden/v2-continued.journal", header: continued2, records: conflictCheckpointRecords())
        try await writeJournal(directory + "/golden/v2.1-typed-values.journal", header: header(seed: 17), records: typedValueEvents().records)

        // Format 2.1: write transactions.
        try await writeJournal(directory + "/golden/v2.1-transactions.journal", header: header(seed: 22), records: transactionEvents().records)

        // Format 2.3: model versions on operations and server rows.
        try await writeJournal(directory + "/golden/v2.3-model-versions.journal", header: header(seed: 23), records: modelVersionEvents().records)

        // Format 2.4: what the device knows of its server, and a reconciliation.
        try await writeJournal(directory + "/golden/v2.4-server-identity.journal", header: header(seed: 24), records: serverIdentityEvents().records)

        // Format 2.5: shared spaces, and their checkpoint parts in a file continuing them.
        let spaces = header(seed: 25)
        let spaceRecords = sharedSpaceEvents().records
        try await writeJournal(directory + "/golden/v2.5-shared-spaces.journal", header: spaces, records: spaceRecords)
        var spacesContinued = header(seed: 26, continues: spaces.generation, firstSequence: UInt64(spaceRecords.count + 1))
        spacesContinued.journalID = spaces.journalID
        try await writeJournal(directory + "/golden/v2.5-shared-spaces-continued.journal", header: spacesContinued,
                               records: sharedSpaceCheckpointRecords())

        // Format 2.6: attachments, field tag 12.
        try await writeJournal(directory + "/golden/v2.6-attachments.journal", header: header(seed: 27), records: attachmentEvents().records)

        try writeCraftedSamples(into: directory, from: healthy)
    }

    /// Files no writer produces on its own, each the regression file of one
    /// recovery rule: what a power cut, a rotting disk or a newer version
    /// can leave behind the healthy sample.
    static func writeCraftedSamples(into directory: String, from healthyPath: String) throws {
        let healthy = [UInt8](try Data(contentsOf: URL(fileURLWithPath: healthyPath)))
        let sampleHeader = header(seed: 1)
        let end = Int64(healthy.count)
        // After the healthy edits and the writer's closing sync-horizon record.
        let nextSequence = try JournalReader(path: healthyPath).scan().nextSequence
        var generator = SeededGenerator(seed: 21)
        func operation(_ id: String, note: String) -> [UInt8] {
            JournalOperation(id: .random(using: &generator), kind: .create, entity: "note", recordID: id,
                             fields: ["text": .string(note)], queuedAt: baseTime + 9 * 60_000).encoded()
        }
        func frame(_ type: RecordType, _ sequence: UInt64, horizon: Int64, _ payload: [UInt8], reserved: UInt16 = 0) -> [UInt8] {
            var bytes = RecordFrame.encode(type: type, generation: sampleHeader.generation, sequence: sequence, horizon: horizon, payload: payload)
            if reserved != 0 {
                bytes[14] = UInt8(truncatingIfNeeded: reserved)
                bytes[15] = UInt8(truncatingIfNeeded: reserved >> 8)
                let crc = CRC32C.mask(CRC32C.checksum(bytes[4..<JournalFormat.recordHeaderLength]))
                for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
            }
            return bytes
        }
        func write(_ name: String, _ bytes: [UInt8]) throws {
            try replace(directory + "/samples/" + name, with: Data(bytes))
        }

        // A newer version's record: a reserved field set, and a type this version may not skip.
        try write("reserved-field.journal", healthy + frame(.operation, nextSequence, horizon: end, operation("n-1", note: "newer"), reserved: 1))
        try write("unknown-type.journal", healthy + frame(RecordType(rawValue: 0x00F0), nextSequence, horizon: end, Array("from a newer version".utf8)))

        // A power cut during one group commit of three records: the sectors of
        // the first never reached the disk (zeros), the next two did.
        let long = String(repeating: "a long note that spans sectors. ", count: 48)
        var batch: [UInt8] = []
        for (index, id) in ["n-1", "n-2", "n-3"].enumerated() {
            batch += frame(.operation, nextSequence + UInt64(index), horizon: end, operation(id, note: index == 0 ? long : "short"))
        }
        var lost = healthy + batch
        let firstEnd = healthy.count + JournalFormat.recordHeaderLength + operation("n-1", note: long).count
        let sector = JournalFormat.sectorSize
        for i in healthy.count..<(firstEnd / sector * sector) { lost[i] = 0 }
        try write("power-cut-batch.journal", lost)

        // A torn append whose payload carries a complete frame of this
        // generation (claiming a horizon past the damage): the payload's
        // last whole sector was lost, and the frame inside is never taken for a
        // record after the damage.
        var inner = frame(.operation, nextSequence + 1, horizon: end + 40, Array("inside a payload".utf8))
        inner = Array(repeating: 0x2E, count: 40) + inner + Array(repeating: 0x2E, count: 1200)
        var embedded = healthy + frame(.operation, nextSequence, horizon: end, inner)
        let payloadEnd = healthy.count + JournalFormat.recordHeaderLength + inner.count
        let lostSector = (payloadEnd / sector - 1) * sector
        for i in lostSector..<(lostSector + sector) { embedded[i] = 0 }
        try write("embedded-frame.journal", embedded)

        // Rot: one flipped bit in the last, durable record; and one in the header's version.
        var flipped = healthy
        flipped[flipped.count - 3] ^= 0x04
        try write("flipped-bit-last.journal", flipped)
        var header = healthy
        header[8] ^= 0x01
        try write("damaged-header.journal", header)
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

    static func replace(_ path: String, with data: Data) throws {
        try? FileManager.default.removeItem(atPath: path)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Writes `records` into a new journal. Durable mode by default, so each
    /// record's sync horizon is its own offset, as a store's edits have it.
    ///
    /// The samples and golden files are the bytes 2.0 and 2.1 writers made
    /// (minor version 0 in the header), and stay so byte for byte: those
    /// writers closed with a sync-horizon record in bulk mode only, so in the
    /// other modes the closing record today's writer appends is cut off.
    static func writeJournal(_ path: String, header: JournalHeader, records: [(RecordType, [UInt8])],
                             mode: JournalWriter.Mode = .durable) async throws {
        try? FileManager.default.removeItem(atPath: path)
        let writer = try await JournalWriter.open(path: path, options: .init(mode: mode, headerForNewJournal: { header }))
        for (type, payload) in records { try await writer.append(type: type, payload: payload) }
        let end = writer.endOffset
        try await writer.close()
        if mode != .bulk {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: UInt64(end))
            try handle.close()
        }
        // The lock file is the writer's; samples are plain files.
        try? FileManager.default.removeItem(atPath: JournalFiles(journal: path).lock)
    }
}
