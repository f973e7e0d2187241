import SyncJournalProtocol
import SyncJournalCore
import SyncJournalStore
import Testing

/// Operations and server rows carry the model version that wrote them
/// through the journal (format 2.3), compaction, checkpoints and the
/// records the app reads.
@Suite("model versions in the journal and the store")
struct ModelVersionJournalTests {
    typealias Kit = StoreRulesKit

    static let id = OperationID(bytes: Array(repeating: 0x11, count: 16))!
    static let header: [UInt8] = Array(repeating: 0x11, count: 16) + [0x02, 0x03, 0x70, 0x69, 0x6E, 0x02, 0x70, 0x31]

    static func update(_ version: Int?, id: OperationID = id, base: Int64? = 10) -> JournalOperation {
        JournalOperation(id: id, kind: .update, entity: "pin", recordID: "p1", fields: [:], baseUpdatedAt: base, queuedAt: 5,
                         modelVersion: version)
    }

    // MARK: Encoding

    @Test("an operation without a model version is encoded exactly as before format 2.3: presence bit 1 clear, nothing after queuedAt")
    func unversionedOperationKeepsItsBytes() throws {
        // id, op 2, "pin", "p1", presence 1, base 10 (zigzag 20), queuedAt 5 (zigzag 10), no fields.
        #expect(Self.update(nil).encoded() == Self.header + [0x01, 0x14, 0x0A, 0x00])
        #expect(Self.update(nil, base: nil).encoded() == Self.header + [0x00, 0x0A, 0x00])
        #expect(try JournalOperation.decode(Self.update(nil).encoded()).modelVersion == nil)
    }

    @Test("an operation with a model version sets presence bit 1, writes the version as a varint after queuedAt, and reads back equal")
    func versionedOperationRoundTrips() throws {
        let operation = Self.update(300)
        #expect(operation.encoded() == Self.header + [0x03, 0x14, 0x0A, 0xAC, 0x02, 0x00])
        let back = try JournalOperation.decode(operation.encoded())
        #expect(back == operation)
        #expect(back.modelVersion == 300)
        let unbased = Self.update(1, base: nil)
        #expect(unbased.encoded() == Self.header + [0x02, 0x0A, 0x01, 0x00])
        #expect(try JournalOperation.decode(unbased.encoded()) == unbased)
        #expect(try JournalOperation.decodeBatch(JournalOperation.encodeBatch([operation, Self.update(nil)])) == [operation, Self.update(nil)])
    }

    @Test("a stored model version of 0, above 65535, or a presence bit above bit 1 is malformed, never read as a version")
    func outOfRangeVersionsAreMalformed() {
        for version: [UInt8] in [[0x00], [0x80, 0x80, 0x04]] {   // 0 and 65536
            #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(Self.header + [0x02, 0x0A] + version + [0x00]) }
        }
        #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(Self.header + [0x04, 0x0A, 0x00]) }
        #expect(throws: ByteReader.Failure.self) { try JournalOperation.decode(Self.header + [0x02, 0x0A]) }
    }

    @Test("a server row keeps its model version through the journal encoding; a row without one is written as before")
    func serverRowRoundTrips() throws {
        func encoded(_ row: ServerRow) -> [UInt8] {
            var writer = ByteWriter(capacity: 32)
            row.encode(into: &writer)
            return writer.bytes
        }
        func decoded(_ bytes: [UInt8]) throws -> ServerRow {
            var reader = ByteReader(bytes)
            let row = try ServerRow.decode(from: &reader)
            try reader.expectEnd()
            return row
        }
        let rowHeader: [UInt8] = [0x03, 0x70, 0x69, 0x6E, 0x02, 0x70, 0x31, 0x14]
        let plain = ServerRow(kind: "pin", id: "p1", updatedAt: 10)
        #expect(encoded(plain) == rowHeader + [0x00, 0x00])
        let tombstone = ServerRow(kind: "pin", id: "p1", updatedAt: 10, deletedAt: 10, modelVersion: 7)
        #expect(encoded(tombstone) == rowHeader + [0x03, 0x14, 0x07, 0x00])
        #expect(try decoded(encoded(tombstone)) == tombstone)
        #expect(throws: ByteReader.Failure.self) { try decoded(rowHeader + [0x02, 0x00, 0x00]) }
    }

    // MARK: Compaction

    @Test("merged edits carry the highest model version of the edits merged; an unversioned edit leaves it as it was")
    func mergesCarryTheHighest() {
        func merged(_ first: JournalOperation, _ second: JournalOperation) -> [CompactionStep] {
            Compactor.steps(for: second, after: [OutboxOperation(operation: first)])
        }
        let second = OperationID(bytes: Array(repeating: 0x22, count: 16))!
        for (a, b, expected) in [(3, nil, 3), (nil, 4, 4), (2, 5, 5), (6, 1, 6)] as [(Int?, Int?, Int?)] {
            let steps = merged(Self.update(a), Self.update(b, id: second))
            #expect(steps == [.replace(Self.id, with: Self.update(expected)), .remove(second)], "\(String(describing: a)) + \(String(describing: b))")
        }
        var create = Self.update(2, base: nil)
        create.kind = .create
        let steps = merged(create, Self.update(9, id: second, base: nil))
        var expected = create
        expected.modelVersion = 9
        #expect(steps == [.replace(Self.id, with: expected), .remove(second)])
        // An update and a delete: the delete that stays carries the update's version.
        var delete = Self.update(nil, id: second, base: 99)
        delete.kind = .delete
        var kept = delete
        kept.baseUpdatedAt = 10
        kept.modelVersion = 4
        #expect(merged(Self.update(4), delete) == [.remove(Self.id), .replace(second, with: kept)])
    }

    // MARK: The store

    @Test("a journal of versioned edits replays and checkpoints keeping each queued operation's version and the highest merged one")
    func replayAndCheckpointKeepVersions() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.create("pin", id: "a", fields: ["name": .string("Cafe")], modelVersion: 3)
            try await store.update("pin", id: "a", changes: ["name": .string("Bar")], modelVersion: 5)
            try await store.update("pin", id: "a", changes: ["name": .string("Pub")], modelVersion: 4)
            try await store.create("pin", id: "b", fields: [:], modelVersion: 2)
            try await store.create("pin", id: "c", fields: [:])
            func versions(_ store: LocalStore) async throws -> [String: Int?] {
                Dictionary(uniqueKeysWithValues: try await store.outboxOperations().map { ($0.operation.recordID, $0.operation.modelVersion) })
            }
            let expected: [String: Int?] = ["a": 5, "b": 2, "c": nil]
            #expect(try await versions(store) == expected)
            let replayed = try await LocalStoreCompactionTests.reopen(store)
            #expect(try await versions(replayed) == expected)
            try await replayed.checkpoint()
            let checkpointed = try await LocalStoreCompactionTests.reopen(replayed)
            #expect(try await versions(checkpointed) == expected)
            #expect(try await checkpointed.record("pin", id: "a")?.modelVersion == 5)
            try await checkpointed.close()
        }
    }

    @Test("a record shows the highest of its server row's model version and its queued edits', at once after a local edit and after a pull")
    func storeRecordShowsTheHighest() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", updatedAt: 10, modelVersion: 4),
                                                                ServerRow(kind: "pin", id: "b", updatedAt: 11)],
                                            cursor: PullCursor(updatedAt: 11, id: "b"))
            #expect(try await store.record("pin", id: "a")?.modelVersion == 4)
            #expect(try await store.record("pin", id: "b")?.modelVersion == nil)
            try await store.update("pin", id: "a", changes: ["x": .int(1)], modelVersion: 2)
            #expect(try await store.record("pin", id: "a")?.modelVersion == 4, "an older local edit does not lower it")
            try await store.update("pin", id: "b", changes: ["x": .int(1)], modelVersion: 6)
            #expect(try await store.record("pin", id: "b")?.modelVersion == 6, "a newer local edit shows at once")
            try await store.update("pin", id: "b", changes: ["x": .int(2)])
            #expect(try await store.records("pin").map(\.modelVersion) == [4, 6], "an untyped edit changes nothing")
            try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", updatedAt: 12, modelVersion: 9)],
                                            cursor: PullCursor(updatedAt: 12, id: "a"))
            #expect(try await store.record("pin", id: "a")?.modelVersion == 9, "a pulled row by a newer version shows")
            try await store.close()
        }
    }

    @Test("an edit stating a model version outside 1 to 65535 is refused before anything is journaled, and so is such a pulled row")
    func outOfRangeVersionsAreRefused() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            for version in [0, -3, 65_536] {
                let error = await Kit.storeError { try await store.create("pin", id: "a", fields: [:], modelVersion: version) }
                #expect(error == .invalidModelVersion(RecordKey(kind: "pin", id: "a"), version: version))
            }
            #expect(try await store.outboxOperations().isEmpty)
            let pulled = await Kit.storeError {
                try await store.applyPulledPage(kind: "pin", rows: [ServerRow(kind: "pin", id: "a", updatedAt: 1, modelVersion: 0)], cursor: nil)
            }
            #expect(pulled?.caseName == "invalidServerData")
            try await store.close()
        }
    }
}
