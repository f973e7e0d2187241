import Foundation
import SyncJournal
import SyncJournalTesting
import Testing

/// The journal's own writer and reader, used the way a tool that reads
/// journals uses them: write, scan, check the status, salvage.
@Suite("Journal writer and reader, end to end")
struct JournalEndToEndTests {
    @Test("a group-commit writer appends a durable record that a scan reads back clean, and salvage copies it")
    func writeThenRead() async throws {
        let directory = try TemporaryDirectory(prefix: "journal-end-to-end")
        defer { directory.remove() }
        let path = directory.file("app.journal")

        let writer = try await JournalWriter.open(path: path, options: .init(mode: .groupCommit))
        #expect(writer.recovery.created)
        #expect(writer.recovery.bytesCut == 0)
        let edit = JournalOperation(id: .random(), kind: .update, entity: "pin", recordID: "p-cafe",
                                    fields: ["name": .string("Café Kranz"), "tags": .stringSet(["coffee"])],
                                    baseUpdatedAt: 1_763_990_000_000, queuedAt: 1_764_000_060_000)
        let seq = try await writer.append(type: .operation, payload: edit.encoded())
        try await writer.close()
        #expect(seq == 1)

        var seen: [JournalOperation] = []
        var types: [RecordType] = []
        let report = try JournalReader(path: path).scan { record in
            types.append(record.type)
            if case .operation(let op) = try JournalEntry.decode(record) { seen.append(op) }
        }
        // Every status a scan can end with, as a tool reports it.
        var said = ""
        switch report.status {
        case .clean: break
        case .tornTail(let offset, let damage): said = "a crash mid-append at \(offset): \(damage)"
        case .corrupt(let offset, let damage): said = "corrupt at \(offset): \(damage); salvage explicitly"
        case .unsupported(let offset, let reason): said = "read-only: a newer version wrote it (at \(offset): \(reason))"
        }
        #expect(said.isEmpty)
        #expect(report.status == .clean)
        #expect(seen == [edit])
        // Every writer closes with a sync-horizon record that claims the records before it.
        #expect(types == [.operation, .syncHorizon])
        #expect(report.lastSequence == 2)

        let salvaged = directory.file("app.salvaged.journal")
        let result = try await JournalSalvage.salvage(from: path, to: salvaged, includeRecordsAfterDamage: true)
        #expect(result.prefixRecords == 2)
        #expect(result.recordsAfterDamage == 0)
    }
}
