import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTesting
import Testing

/// The bytes format 2.5 gives shared spaces: an operation's presence bit 2
/// and a row's flag bit 2, each followed by the space's 16 bytes; the record
/// types 0x0105 to 0x0108; checkpoint parts 9 and 10. Everything in the
/// personal space keeps the bytes 2.4 wrote.
@Suite("shared spaces in the journal's payloads (format 2.5)")
struct SharedSpaceCodecTests {
    static let trip = SpaceID("5a1e0c3b-7d2f-4e81-9b6a-0c4d8e2f1a37")!
    static let tripBytes: [UInt8] = [0x5A, 0x1E, 0x0C, 0x3B, 0x7D, 0x2F, 0x4E, 0x81, 0x9B, 0x6A, 0x0C, 0x4D, 0x8E, 0x2F, 0x1A, 0x37]
    static let club = SpaceID("b07c1d9e-3f5a-4c2b-8e71-6d0a9f4b2c58")!

    static let id = OperationID(bytes: Array(repeating: 0x11, count: 16))!
    /// id, op 2 (update), "pin", "p1": the bytes before the presence byte.
    static let operationHeader: [UInt8] = Array(repeating: 0x11, count: 16) + [0x02, 0x03, 0x70, 0x69, 0x6E, 0x02, 0x70, 0x31]
    /// "pin", "p1", updatedAt 10: the bytes before a row's flags.
    static let rowHeader: [UInt8] = [0x03, 0x70, 0x69, 0x6E, 0x02, 0x70, 0x31, 0x14]

    static func update(_ space: SpaceID, version: Int? = nil, base: Int64? = 10) -> JournalOperation {
        JournalOperation(id: id, kind: .update, entity: "pin", recordID: "p1", fields: [:], baseUpdatedAt: base, queuedAt: 5,
                         modelVersion: version, space: space)
    }

    static func encoded(_ row: ServerRow) -> [UInt8] {
        var writer = ByteWriter(capacity: 32)
        row.encode(into: &writer)
        return writer.bytes
    }

    static func decodedRow(_ bytes: [UInt8]) throws -> ServerRow {
        var reader = ByteReader(bytes)
        let row = try ServerRow.decode(from: &reader)
        try reader.expectEnd()
        return row
    }

    /// `event` as the record the store journals it in.
    static func record(_ event: StoreEvent) -> JournalRecord {
        JournalRecord(offset: 80, sequence: 1, type: event.recordType, payload: event.encodedPayload())
    }

    static let tripDescription = Space(id: trip, name: "Lisbon trip", role: .editor, members: [
        SpaceMember(user: "ana", role: .owner), SpaceMember(user: "ben", role: .editor), SpaceMember(user: "cleo", role: .viewer),
    ], version: 7)

    /// Rows of the trip space: one with fields, one with a model version, a tombstone.
    static let tripRows = [
        ServerRow(kind: "pin", id: "p-tram", fields: ["name": .string("Tram 28")], updatedAt: 40, space: trip),
        ServerRow(kind: "pin", id: "p-tasca", fields: ["name": .string("Tasca")], updatedAt: 41, modelVersion: 2, space: trip),
        ServerRow(kind: "pin", id: "p-gone", updatedAt: 42, deletedAt: 42, space: trip),
    ]

    /// Every event that carries a space, of each record type and checkpoint part that can.
    static var spacedEvents: [StoreEvent] {
        let create = JournalOperation(id: OperationID(bytes: Array(repeating: 0x22, count: 16))!, kind: .create, entity: "pin",
                                      recordID: "p-fado", fields: ["name": .string("Fado")], queuedAt: 6, modelVersion: 3, space: trip)
        let inClub = JournalOperation(id: OperationID(bytes: Array(repeating: 0x33, count: 16))!, kind: .delete, entity: "note",
                                      recordID: "n1", baseUpdatedAt: 9, queuedAt: 7, space: club)
        let personal = update(.personal)
        return [
            .pulled(kind: "pin", rows: tripRows, cursor: PullCursor(updatedAt: 42, id: "p-gone"), space: trip),
            .pulled(kind: "pin", rows: [], cursor: nil, space: trip),
            .forgotten(kind: "pin", ids: ["p-tasca", "p-tram"], space: trip),
            .forgotten(kind: "pin", ids: [], space: club),
            .spaceDescribed(tripDescription),
            .spaceDescribed(Space(id: club, name: "", role: .viewer, members: [], version: -1)),
            .spaceDescribed(Space(id: club, name: "Book club ✓", role: .owner, members: [SpaceMember(user: "", role: .owner)], version: .max)),
            .spaceLost(trip),
            .edit(update(trip, version: 300), compaction: []),
            .edit(create, compaction: [.remove(id), .replace(id, with: update(trip))]),
            .editBatch([create, personal, inClub]),
            .transaction([TransactionEdit(operation: create, compaction: []), TransactionEdit(operation: inClub, compaction: [.remove(id)])]),
            .acknowledged([Acknowledgement(operationID: id, row: tripRows[0]), Acknowledgement(operationID: id, row: tripRows[2])]),
            .conflictResolved(id, server: tripRows[1], base: tripRows[0],
                              resolution: ConflictResolution(strategy: .mergeFields, replacement: update(trip), lostFields: ["name"])),
            .checkpoint(.rows(tripRows + [ServerRow(kind: "pin", id: "p1", updatedAt: 1)])),
            .checkpoint(.outbox([OutboxOperation(operation: create), OutboxOperation(operation: personal, sent: true, attempts: 2)])),
            .checkpoint(.baseRows([tripRows[0]])),
            .checkpoint(.rejections([RejectionRecord(operation: create, reason: "no access to space \(trip): membership ended", attempts: 1)])),
            .checkpoint(.spaceCursors(trip, ["pin": PullCursor(updatedAt: 42, id: "p-gone"), "note": PullCursor(updatedAt: 3, id: "n")])),
            .checkpoint(.spaceCursors(club, [:])),
            .checkpoint(.spaces([tripDescription, Space(id: club, name: "Book club", role: .owner, members: [], version: 1)])),
            .checkpoint(.spaces([])),
        ]
    }

    // MARK: Operations and rows

    @Test("an operation in a shared space sets presence bit 2 and writes the space's 16 bytes after the model version; a personal one is written as in 2.4")
    func operationBytes() throws {
        // presence, base 10 (zigzag 20), queuedAt 5 (zigzag 10), [version 300], [space], no fields.
        #expect(Self.update(.personal).encoded() == Self.operationHeader + [0x01, 0x14, 0x0A, 0x00])
        #expect(Self.update(.personal, version: 300).encoded() == Self.operationHeader + [0x03, 0x14, 0x0A, 0xAC, 0x02, 0x00])
        let cases: [(JournalOperation, [UInt8])] = [
            (Self.update(Self.trip), Self.operationHeader + [0x05, 0x14, 0x0A] + Self.tripBytes + [0x00]),
            (Self.update(Self.trip, version: 300), Self.operationHeader + [0x07, 0x14, 0x0A, 0xAC, 0x02] + Self.tripBytes + [0x00]),
            (Self.update(Self.trip, base: nil), Self.operationHeader + [0x04, 0x0A] + Self.tripBytes + [0x00]),
        ]
        for (operation, bytes) in cases {
            #expect(operation.encoded() == bytes)
            #expect(operation.encodedLength == bytes.count)
            let back = try JournalOperation.decode(bytes)
            #expect(back == operation)
            #expect(back.space == Self.trip)
        }
        #expect(try JournalOperation.decode(Self.update(.personal).encoded()).space == .personal)
    }

    @Test("a server row in a shared space sets flag bit 2 and writes the space's 16 bytes after its model version; a personal one is written as in 2.4")
    func rowBytes() throws {
        #expect(Self.encoded(ServerRow(kind: "pin", id: "p1", updatedAt: 10)) == Self.rowHeader + [0x00, 0x00])
        let cases: [(ServerRow, [UInt8])] = [
            (ServerRow(kind: "pin", id: "p1", updatedAt: 10, space: Self.trip), Self.rowHeader + [0x04] + Self.tripBytes + [0x00]),
            // deletedAt 10 (zigzag 20), version 7, then the space.
            (ServerRow(kind: "pin", id: "p1", updatedAt: 10, deletedAt: 10, modelVersion: 7, space: Self.trip),
             Self.rowHeader + [0x07, 0x14, 0x07] + Self.tripBytes + [0x00]),
        ]
        for (row, bytes) in cases {
            #expect(Self.encoded(row) == bytes)
            let back = try Self.decodedRow(bytes)
            #expect(back == row)
            #expect(back.key == RecordKey(kind: "pin", id: "p1", space: Self.trip))
        }
    }

    @Test("random operations and rows round-trip with and without a space, and a space never changes the bytes before it")
    func randomRoundTrips() throws {
        var rng = SeededGenerator(seed: 0x25)
        let spaces: [SpaceID] = [.personal, Self.trip, Self.club, SpaceID.random(using: &rng)]
        for round in 0..<400 {
            var operation = randomOperation(using: &rng)
            let personalBytes = operation.encoded()
            operation.space = spaces[round % spaces.count]
            let bytes = operation.encoded()
            #expect(try JournalOperation.decode(bytes) == operation, "round \(round)")
            #expect(bytes.count == personalBytes.count + (operation.space.isPersonal ? 0 : 16))
            #expect(operation.encodedLength == bytes.count)
            let row = ServerRow(kind: operation.entity, id: operation.recordID, fields: operation.fields,
                                updatedAt: randomInt64(using: &rng), deletedAt: round % 3 == 0 ? 5 : nil,
                                modelVersion: round % 2 == 0 ? round + 1 : nil, space: operation.space)
            #expect(try Self.decodedRow(Self.encoded(row)) == row, "round \(round)")
        }
    }

    @Test("presence and flag bits above bit 2 are still malformed, and a space cut short is malformed, never read as another space")
    func reservedBitsAndShortSpaces() {
        for presence: UInt8 in [0x08, 0x0C, 0x10, 0x80] {
            #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(Self.operationHeader + [presence, 0x0A] + Self.tripBytes + [0x00]) }
        }
        for flags: UInt8 in [0x08, 0x0C, 0x80] {
            #expect(throws: ByteReader.Failure.self) { try Self.decodedRow(Self.rowHeader + [flags] + Self.tripBytes + [0x00]) }
        }
        for length in 0..<16 {
            #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(Self.operationHeader + [0x04, 0x0A] + Self.tripBytes.prefix(length)) }
            #expect(throws: ByteReader.Failure.self) { try Self.decodedRow(Self.rowHeader + [0x04] + Self.tripBytes.prefix(length)) }
        }
    }

    // MARK: Records and checkpoint parts

    @Test("every 2.5 record type and checkpoint part, and every record holding an operation or row of a space, round-trips through its record")
    func eventsRoundTrip() throws {
        for event in Self.spacedEvents {
            #expect(try StoreEvent.decode(Self.record(event)) == event, "\(event)")
        }
    }

    @Test("a page, a forgetting, a description and a loss in a shared space use types 0x0105 to 0x0108; the personal ones keep 0x0101 and 0x0103")
    func recordTypes() {
        let types = [
            StoreEvent.pulled(kind: "pin", rows: [], cursor: nil, space: Self.trip).recordType,
            StoreEvent.forgotten(kind: "pin", ids: [], space: Self.trip).recordType,
            StoreEvent.spaceDescribed(Self.tripDescription).recordType,
            StoreEvent.spaceLost(Self.trip).recordType,
        ]
        #expect(types.map(\.rawValue) == [0x0105, 0x0106, 0x0107, 0x0108])
        #expect(types.allSatisfy { !$0.isSkippable && StoreEvent.isUnderstood($0) })
        #expect(types.map(\.name) == ["space-rows", "space-forgotten", "space", "space-lost"])
        #expect(StoreEvent.pulled(kind: "pin", rows: [], cursor: nil).recordType == .pulledRows)
        #expect(StoreEvent.forgotten(kind: "pin", ids: []).recordType == .rowsForgotten)
    }

    @Test("the 2.5 payloads are laid out as FORMAT.md says: the space's 16 bytes, then the 2.4 payload, or the description's fields in order")
    func payloadLayouts() {
        #expect(StoreEvent.spaceLost(Self.trip).encodedPayload() == Self.tripBytes)
        let rows = [ServerRow(kind: "pin", id: "p1", updatedAt: 10, space: Self.trip)]
        let cursor = PullCursor(updatedAt: 10, id: "p1")
        // A page in a space is the space, then a 0x0101 payload (whose rows carry the space too).
        #expect(StoreEvent.pulled(kind: "pin", rows: rows, cursor: cursor, space: Self.trip).encodedPayload()
                == Self.tripBytes + StoreEvent.pulled(kind: "pin", rows: rows, cursor: cursor).encodedPayload())
        #expect(StoreEvent.forgotten(kind: "pin", ids: ["p1"], space: Self.trip).encodedPayload()
                == Self.tripBytes + StoreEvent.forgotten(kind: "pin", ids: ["p1"]).encodedPayload())
        // uuid, name "T", role 1 (editor), version 7 (zigzag 14), 2 members: "a" owner, "b" viewer.
        let described = Space(id: Self.trip, name: "T", role: .editor,
                              members: [SpaceMember(user: "a", role: .owner), SpaceMember(user: "b", role: .viewer)], version: 7)
        #expect(StoreEvent.spaceDescribed(described).encodedPayload()
                == Self.tripBytes + [0x01, 0x54, 0x01, 0x0E, 0x02, 0x01, 0x61, 0x00, 0x01, 0x62, 0x02])
        // Part 9: the part number, the space, then part 3's cursors; part 10: the number, a count, descriptions.
        #expect(StoreEvent.checkpoint(.spaceCursors(Self.trip, ["pin": cursor])).encodedPayload()
                == [0x09] + Self.tripBytes + Array(StoreEvent.checkpoint(.cursors(["pin": cursor])).encodedPayload().dropFirst()))
        #expect(StoreEvent.checkpoint(.spaces([described])).encodedPayload()
                == [0x0A, 0x01] + StoreEvent.spaceDescribed(described).encodedPayload())
    }

    @Test("every payload of a 2.5 record cut at every byte offset is malformed, never decoded")
    func everyTruncationIsMalformed() {
        var cuts = 0
        for event in Self.spacedEvents {
            let whole = Self.record(event)
            for cut in 0..<whole.payload.count {
                var record = whole
                record.payload = Array(whole.payload.prefix(cut))
                do {
                    let decoded = try StoreEvent.decode(record)
                    Issue.record("\(event) cut at \(cut) of \(whole.payload.count) decoded as \(String(describing: decoded))")
                } catch {
                    guard case .malformed = error else {
                        Issue.record("\(event) cut at \(cut): \(error), not malformed")
                        continue
                    }
                }
                cuts += 1
            }
        }
        #expect(cuts > 1_000)
    }

    @Test("a role code other than 0, 1 or 2 in a description or a member is malformed, as is an unknown checkpoint part 11")
    func unknownCodesAreMalformed() {
        let payload = StoreEvent.spaceDescribed(Space(id: Self.trip, name: "T", role: .editor,
                                                      members: [SpaceMember(user: "a", role: .owner)], version: 7)).encodedPayload()
        for (index, code) in [(18, UInt8(3)), (18, 0xFF), (23, 3), (23, 0x80)] {
            var bytes = payload
            bytes[index] = code
            #expect(throws: JournalEntry.DecodeError.self) {
                try StoreEvent.decode(JournalRecord(offset: 80, sequence: 1, type: .spaceDescribed, payload: bytes))
            }
        }
        #expect(throws: JournalEntry.DecodeError.self) {
            try StoreEvent.decode(JournalRecord(offset: 80, sequence: 1, type: .checkpoint, payload: [0x0B, 0x00]))
        }
        // Trailing bytes after a loss's space.
        #expect(throws: JournalEntry.DecodeError.self) {
            try StoreEvent.decode(JournalRecord(offset: 80, sequence: 1, type: .spaceLost, payload: Self.tripBytes + [0x00]))
        }
    }
}
