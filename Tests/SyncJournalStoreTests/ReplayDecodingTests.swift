import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol
import SyncJournalStore
import Testing

/// Replay decodes an edit that its own compaction removes without building
/// its fields; these tests hold that it refuses exactly what a full decode
/// refuses and reaches the same state.
@Suite("Replay decoding")
struct ReplayDecodingTests {
    static func id(_ n: UInt8) -> OperationID { OperationID(bytes: Array(repeating: n, count: 16))! }

    static func operation(_ n: UInt8, _ fields: [String: FieldValue]) -> JournalOperation {
        JournalOperation(id: id(n), kind: .update, entity: "pin", recordID: "p1", fields: fields, baseUpdatedAt: 5, queuedAt: Int64(n))
    }

    static func record(_ event: StoreEvent, sequence: UInt64 = 1) -> JournalRecord {
        JournalRecord(offset: 0, sequence: sequence, type: event.recordType, payload: event.encodedPayload())
    }

    static let fieldLists: [[String: FieldValue]] = [
        [:], ["n": .int(-3)], ["a": .null, "b": .bool(true), "c": .double(1.5), "d": .bytes([0, 255]), "e": .string("plain")],
        ["é": .string("x")], ["name": .string("Grüße")], ["tags": .stringSet(["a", "b"])],
    ]

    @Test("an edit merged into an earlier one folds to the same state whether its fields are built or skipped")
    func mergedEditFoldsToTheSameState() throws {
        for fields in Self.fieldLists {
            let first = Self.operation(1, ["n": .int(1)])
            var merged = first
            merged.fields.merge(fields) { _, new in new }
            let second = Self.operation(2, fields)
            let events: [StoreEvent] = [.edit(first, compaction: []), .edit(second, compaction: [.replace(first.id, with: merged), .remove(second.id)])]
            var fold = Replayer.Fold()
            var expected = StoreState()
            for (index, event) in events.enumerated() {
                try fold.fold(Self.record(event, sequence: UInt64(index + 1)))
                expected.apply(event)
            }
            try fold.finish()
            #expect(fold.state == expected, "\(fields)")
            #expect(fold.state.outbox.operations.map(\.operation) == [merged])
        }
    }

    @Test("an edit that stays queued keeps its fields when replay decodes it")
    func keptEditKeepsItsFields() throws {
        for fields in Self.fieldLists {
            let earlier = Self.operation(1, ["n": .int(1)])
            let kept = Self.operation(2, fields)
            let event = StoreEvent.edit(kept, compaction: [.remove(earlier.id)])
            #expect(try StoreEvent.decode(Self.record(event), forFold: true) == event, "\(fields)")
        }
    }

    @Test("a damaged field list in an edit that removes itself fails replay with the same failure as a full decode")
    func damagedSkippedFieldsFailAlike() throws {
        let first = Self.operation(1, ["n": .int(1)])
        let second = Self.operation(2, ["a": .string("x"), "b": .int(2)])
        let event = StoreEvent.edit(second, compaction: [.replace(first.id, with: first), .remove(second.id)])
        let payload = event.encodedPayload()
        // The field list starts after id (16), kind, "pin", "p1", presence, base and queuedAt.
        let fieldsAt = 16 + 1 + 4 + 3 + 1 + 1 + 1
        #expect(payload[fieldsAt] == 2)
        var damaged: [[UInt8]] = []
        for at in fieldsAt..<(fieldsAt + 12) {
            for value: UInt8 in [0x00, 0x7F, 0x80, 0xFF, 0x07] {
                var bytes = payload
                bytes[at] = value
                damaged.append(bytes)
            }
        }
        for bytes in damaged {
            let record = JournalRecord(offset: 0, sequence: 1, type: event.recordType, payload: bytes)
            let full = Result { () throws(JournalEntry.DecodeError) in try StoreEvent.decode(record) }
            let lazy = Result { () throws(JournalEntry.DecodeError) in try StoreEvent.decode(record, forFold: true) }
            switch (full, lazy) {
            case (.failure(let a), .failure(let b)): #expect(a == b)
            case (.success(let a), .success(let b)):
                // Decodes either way: the same event but for the fields of the edit that leaves the queue.
                guard case .edit(let fullEdit, let fullSteps) = a, case .edit(let lazyEdit, let lazySteps) = b else {
                    Issue.record("not an edit")
                    continue
                }
                #expect(fullSteps == lazySteps)
                var withoutFields = fullEdit
                withoutFields.fields = lazyEdit.fields
                #expect(withoutFields == lazyEdit)
            default: Issue.record("one decode failed and the other did not: \(full) vs \(lazy)")
            }
        }
    }

    @Test("skipping a plain field list ends where decoding it ends")
    func skippingEndsWhereDecodingEnds() throws {
        for fields in Self.fieldLists {
            var writer = ByteWriter()
            FieldListCodec.encode(fields, into: &writer)
            writer.writeUInt8(0xAB)
            var skipping = ByteReader(writer.bytes)
            var decoding = ByteReader(writer.bytes)
            #expect(try FieldListCodec.decode(from: &decoding) == fields)
            if FieldListCodec.skipIfPlain(&skipping) {
                #expect(skipping.position == decoding.position, "\(fields)")
            } else {
                // Only lists with something not plain are left to the full decode.
                #expect(fields.contains { !$0.key.utf8.allSatisfy { $0 < 0x80 } || { if case .stringSet = $0.value { true } else if case .string(let s) = $0.value { !s.utf8.allSatisfy { $0 < 0x80 } } else { false } }($0) })
            }
        }
    }
}
