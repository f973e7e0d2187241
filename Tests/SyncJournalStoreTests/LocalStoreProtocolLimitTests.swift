import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

/// Edits no server would accept (past the protocol's limits) are refused
/// when they are made, instead of being queued and rejected at the next push.
@Suite("LocalStore: the protocol's limits are checked when an edit is made")
struct LocalStoreProtocolLimitTests {
    typealias Kit = StoreRulesKit

    @Test("a kind of 129 bytes, or one containing U+0000, is refused with invalidKind; 128 bytes are accepted")
    func kindLimit() async throws {
        try await LocalStoreValidationTests.withStore { store in
            let records = try Kit.recordCount(store.path)
            let long = String(repeating: "k", count: ProtocolLimits.maximumKindBytes + 1)
            guard case .invalidKind? = await Kit.storeError({ try await store.create(long, id: "a", fields: [:]) }) else {
                Issue.record("a kind of 129 bytes was not refused as an invalid kind")
                return
            }
            guard case .invalidKind? = await Kit.storeError({ try await store.create("pi\u{0}n", id: "a", fields: [:]) }) else {
                Issue.record("a kind with U+0000 was not refused as an invalid kind")
                return
            }
            #expect(try Kit.recordCount(store.path) == records)
            #expect(try await store.outboxOperations().isEmpty)
            let longest = String(repeating: "k", count: ProtocolLimits.maximumKindBytes)
            try await store.create(longest, id: "a", fields: [:])
            #expect(try await store.outboxOperations().count == 1)
        }
    }

    @Test("a create with 257 fields, or a field name of 129 bytes, is refused with invalidFields and nothing is queued")
    func fieldLimits() async throws {
        try await LocalStoreValidationTests.withStore { store in
            var fields: [String: FieldValue] = [:]
            for index in 0...ProtocolLimits.maximumFieldsPerRecord { fields["f\(index)"] = .int(Int64(index)) }
            guard case .invalidFields? = await Kit.storeError({ try await store.create("pin", id: "many", fields: fields) }) else {
                Issue.record("257 fields were not refused")
                return
            }
            let longName = String(repeating: "n", count: ProtocolLimits.maximumFieldNameBytes + 1)
            guard case .invalidFields? = await Kit.storeError({ try await store.create("pin", id: "named", fields: [longName: .int(1)]) }) else {
                Issue.record("a field name of 129 bytes was not refused")
                return
            }
            let queued = try await store.outboxOperations()
            #expect(queued.isEmpty)
        }
    }

    @Test("an update that would grow a record past 256 fields is refused; one that only changes fields it has is accepted")
    func mergedFieldLimit() async throws {
        try await LocalStoreValidationTests.withStore { store in
            var fields: [String: FieldValue] = [:]
            for index in 0..<ProtocolLimits.maximumFieldsPerRecord { fields["f\(index)"] = .int(Int64(index)) }
            try await store.create("pin", id: "full", fields: fields)
            guard case .invalidFields? = await Kit.storeError({ try await store.update("pin", id: "full", changes: ["extra": .int(1)]) }) else {
                Issue.record("an update to a 257th field was not refused")
                return
            }
            try await store.update("pin", id: "full", changes: ["f0": .int(-1)])
            #expect(try await store.record("pin", id: "full")?.fields["f0"] == .int(-1))
        }
    }

    @Test("in a write transaction, an update that grows a record past 256 fields (counting fields an earlier edit of the same transaction added) is refused and nothing is journaled")
    func mergedFieldLimitInTransaction() async throws {
        try await LocalStoreValidationTests.withStore { store in
            var fields: [String: FieldValue] = [:]
            for index in 0..<(ProtocolLimits.maximumFieldsPerRecord - 1) { fields["f\(index)"] = .int(Int64(index)) }
            try await store.create("pin", id: "almost", fields: fields)
            let records = try Kit.recordCount(store.path)
            let refused = await Kit.storeError({
                try await store.write { tx in
                    try tx.update("pin", id: "almost", changes: ["last": .int(1)])
                    try tx.update("pin", id: "almost", changes: ["oneTooMany": .int(2)])
                }
            })
            guard case .invalidFields(let kind, let id, _)? = refused else {
                Issue.record("the transaction's 257th field was not refused: \(String(describing: refused))")
                return
            }
            #expect(kind == "pin" && id == "almost")
            #expect(try Kit.recordCount(store.path) == records, "nothing was journaled")
            #expect(try await store.record("pin", id: "almost")?.fields["last"] == nil)
            // Up to the limit, the same transaction goes through.
            try await store.write { tx in
                try tx.update("pin", id: "almost", changes: ["last": .int(1)])
                try tx.update("pin", id: "almost", changes: ["f0": .int(-1)])
            }
            #expect(try await store.record("pin", id: "almost")?.fields.count == ProtocolLimits.maximumFieldsPerRecord)
        }
    }
}
