import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

/// Replay keeps an edit merged into an earlier queued operation as bytes and
/// builds the replacement only when it is needed; these tests hold that the
/// state, and every failure, are those of decoding and folding each record in full.
@Suite("Merged edits in replay")
struct MergedEditReplayTests {
    static func id(_ n: UInt8) -> OperationID { OperationID(bytes: Array(repeating: n, count: 16))! }

    static func update(_ n: UInt8, record: String = "p1", _ fields: [String: FieldValue]) -> JournalOperation {
        JournalOperation(id: id(n), kind: .update, entity: "pin", recordID: record, fields: fields, baseUpdatedAt: 5, queuedAt: Int64(n))
    }

    static func record(_ event: StoreEvent, sequence: UInt64) -> JournalRecord {
        JournalRecord(offset: Int64(sequence) * 100, sequence: sequence, type: event.recordType, payload: event.encodedPayload())
    }

    /// The merge of `edit` into `earlier`, as the store journals it.
    static func merge(_ edit: JournalOperation, into earlier: JournalOperation) -> (event: StoreEvent, merged: JournalOperation) {
        var merged = earlier
        merged.fields.merge(edit.fields) { _, new in new }
        return (.edit(edit, compaction: [.replace(earlier.id, with: merged), .remove(edit.id)]), merged)
    }

    /// Decodes and folds each record in full, as replay did before merges were kept as bytes.
    static func foldInFull(_ records: [JournalRecord]) -> Result<StoreState, Replayer.Failure> {
        var state = StoreState()
        for record in records {
            let event: StoreEvent?
            do { event = try StoreEvent.decode(record) } catch { return .failure(.undecodable(error)) }
            guard let event else { continue }
            if let reason = state.inconsistency(in: event) { return .failure(.inconsistent(sequence: record.sequence, reason: reason)) }
            state.apply(event)
        }
        return .success(state)
    }

    static func foldKeepingMerges(_ records: [JournalRecord]) -> Result<StoreState, Replayer.Failure> {
        var fold = Replayer.Fold()
        do throws(Replayer.Failure) {
            for record in records { try fold.fold(record) }
            try fold.finish()
            return .success(fold.state)
        } catch {
            return .failure(error)
        }
    }

    /// Two records edited in turn many times, with sends, a plain edit and an acknowledgement between the merges.
    static func interleavedJournal() -> [StoreEvent] {
        var events: [StoreEvent] = []
        var queued = [update(1, record: "a", ["n": .int(0)]), update(2, record: "b", ["n": .int(0)])]
        events += queued.map { StoreEvent.edit($0, compaction: []) }
        for n in UInt8(3)..<UInt8(60) {
            let slot = Int(n % 2)
            let edit = update(n, record: slot == 0 ? "a" : "b", n % 3 == 0 ? ["n": .int(Int64(n))] : ["t": .string("v\(n)"), "n": .int(-Int64(n))])
            let (event, merged) = merge(edit, into: queued[slot])
            queued[slot] = merged
            events.append(event)
            if n == 30 { events.append(.withdrawn([id(99)])) }
        }
        events.append(.sent([queued[0].id]))
        // Sent: the next edit of "a" queues behind it instead of merging.
        events.append(.edit(update(70, record: "a", ["z": .bool(true)]), compaction: []))
        events.append(.acknowledged([Acknowledgement(operationID: queued[0].id,
                                                     row: ServerRow(kind: "pin", id: "a", fields: ["n": .int(1)], updatedAt: 9))]))
        return events
    }

    @Test("a journal of merged edits replays to the state of decoding and folding every record in full")
    func mergesReplayToTheFullState() throws {
        let events = Self.interleavedJournal()
        let records = events.enumerated().map { Self.record($1, sequence: UInt64($0 + 1)) }
        #expect(records.contains { MergedEdit.recognise($0) != nil })
        let full = Self.foldInFull(records)
        var expected = StoreState()
        for event in events { expected.apply(event) }
        #expect(try full.get() == expected)
        #expect(try Self.foldKeepingMerges(records).get() == expected)
        // Every prefix too: merges still pending at the end are built by finish.
        for end in 1...records.count {
            #expect(try Self.foldKeepingMerges(Array(records[..<end])).get() == Self.foldInFull(Array(records[..<end])).get(), "prefix \(end)")
        }
    }

    @Test("a merged edit is recognised from its bytes with its ids, and its replacement is built exactly")
    func recognisedMergeCarriesItsParts() throws {
        let earlier = Self.update(1, ["a": .null, "b": .bool(false), "c": .double(-0.5), "d": .bytes([0, 200]), "e": .string("x"), "f": .int(-1)])
        let (event, merged) = Self.merge(Self.update(2, ["e": .string("y")]), into: earlier)
        let found = try #require(MergedEdit.recognise(Self.record(event, sequence: 7)))
        #expect(found.editID == Self.id(2))
        #expect(found.target == Self.id(1))
        #expect(found.sequence == 7 && found.offset == 700)
        #expect(try found.replacementOperation() == merged)
        #expect(found.replaces(on: RecordKey(kind: "pin", id: "p1")))
        #expect(!found.replaces(on: RecordKey(kind: "pin", id: "p2")))
        #expect(!found.replaces(on: RecordKey(kind: "pins", id: "p1")))
    }

    @Test("edits that are not plain merges are left to the full decode")
    func otherEditsAreNotRecognised() {
        let earlier = Self.update(1, ["n": .int(1)])
        let edit = Self.update(2, ["n": .int(2)])
        let unicode = Self.update(3, ["name": .string("Grüße")])
        let candidates: [StoreEvent] = [
            .edit(edit, compaction: []),
            .edit(edit, compaction: [.remove(earlier.id)]),
            .edit(edit, compaction: [.remove(edit.id), .replace(earlier.id, with: earlier)]),
            .edit(edit, compaction: [.replace(earlier.id, with: earlier), .remove(earlier.id)]),
            // The replacement's id differs from the operation it replaces.
            .edit(edit, compaction: [.replace(earlier.id, with: edit), .remove(edit.id)]),
            Self.merge(unicode, into: earlier).event,
            Self.merge(edit, into: unicode).event,
            .edit(edit, compaction: [.replace(earlier.id, with: earlier), .remove(edit.id), .remove(Self.id(9))]),
        ]
        for event in candidates {
            #expect(MergedEdit.recognise(Self.record(event, sequence: 1)) == nil, "\(event)")
        }
    }

    @Test("a damaged merged edit fails replay exactly as a full decode and fold does, and an accepted one is the same edit")
    func damagedMergesFailAlike() throws {
        let earlier = Self.update(1, ["n": .int(1), "t": .string("abc")])
        let (event, _) = Self.merge(Self.update(2, ["t": .string("xyz"), "u": .bytes([1, 2, 3])]), into: earlier)
        let first = Self.record(.edit(earlier, compaction: []), sequence: 1)
        let payload = event.encodedPayload()
        var recognisedDamaged = 0
        // Every byte of the payload, set to values that break lengths, tags, varints and ASCII.
        for at in payload.indices {
            for value: UInt8 in [0x00, 0x01, 0x02, 0x7F, 0x80, 0xC3, 0xFF, payload[at] ^ 0x01] where value != payload[at] {
                var bytes = payload
                bytes[at] = value
                let damaged = JournalRecord(offset: 200, sequence: 2, type: .compactedEdit, payload: bytes)
                let full = Self.foldInFull([first, damaged])
                let kept = Self.foldKeepingMerges([first, damaged])
                switch (full, kept) {
                case (.success(let a), .success(let b)): #expect(a == b, "byte \(at) = \(value)")
                case (.failure(let a), .failure(let b)): #expect(a == b, "byte \(at) = \(value)")
                default: Issue.record("byte \(at) = \(value): \(full) vs \(kept)")
                }
                if let merged = MergedEdit.recognise(damaged) {
                    recognisedDamaged += 1
                    let decoded = try StoreEvent.decode(damaged, forFold: true)
                    guard case .edit(let edit, let steps) = decoded else { Issue.record("not an edit"); continue }
                    #expect(edit.id == merged.editID)
                    #expect(steps == [.replace(merged.target, with: try merged.replacementOperation()), .remove(merged.editID)])
                }
            }
        }
        // Some changes leave a valid merge (a field's value, a stamp): those were checked above.
        #expect(recognisedDamaged > 0)
    }

    @Test("a merge whose replacement is on another record is refused as inconsistent, as a full fold refuses it")
    func mergeOnAnotherRecordIsInconsistent() throws {
        let earlier = Self.update(1, record: "p1", ["n": .int(1)])
        var moved = earlier
        moved.recordID = "p2"
        let edit = Self.update(2, record: "p1", ["n": .int(2)])
        let records = [Self.record(.edit(earlier, compaction: []), sequence: 1),
                       Self.record(.edit(edit, compaction: [.replace(earlier.id, with: moved), .remove(edit.id)]), sequence: 2)]
        #expect(MergedEdit.recognise(records[1]) != nil)
        let kept = Self.foldKeepingMerges(records)
        guard case .failure(.inconsistent(let sequence, _)) = kept else {
            Issue.record("not refused: \(kept)")
            return
        }
        #expect(sequence == 2)
        #expect(kept == Self.foldInFull(records))
    }

    @Test("a merge into an operation that is no longer queued leaves the state as it was")
    func mergeIntoAnUnqueuedOperationChangesNothing() throws {
        let earlier = Self.update(1, ["n": .int(1)])
        let (event, _) = Self.merge(Self.update(2, ["n": .int(2)]), into: earlier)
        let records = [Self.record(.edit(earlier, compaction: []), sequence: 1), Self.record(.discarded(earlier.id), sequence: 2),
                       Self.record(event, sequence: 3)]
        let state = try Self.foldKeepingMerges(records).get()
        #expect(state.outbox.isEmpty)
        #expect(state == (try Self.foldInFull(records).get()))
    }

    @Test("a merge inside a checkpoint is refused as an ordinary record before its end, as a full fold refuses it")
    func mergeInsideACheckpointIsRefused() throws {
        let earlier = Self.update(1, ["n": .int(1)])
        let (event, _) = Self.merge(Self.update(2, ["n": .int(2)]), into: earlier)
        let records = [Self.record(.checkpoint(.outbox([OutboxOperation(operation: earlier)])), sequence: 1), Self.record(event, sequence: 2)]
        var fold = Replayer.Fold()
        try fold.fold(records[0])
        #expect(throws: Replayer.Failure.incompleteCheckpoint(sequence: 2, reason: "ordinary record before the end part")) {
            try fold.fold(records[1])
        }
        #expect(fold.records == 2)
    }
}
