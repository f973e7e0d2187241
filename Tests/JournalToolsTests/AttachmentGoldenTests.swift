import Foundation
import JournalCrashTool
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// The 2.6 golden journal reads back to the state it was made from, its
/// attachments name the bytes they were made of, `journal-dump` shows them,
/// and damage to a record holding one is never read as another record.
@Suite("attachments: golden journal and journal-dump")
struct AttachmentGoldenTests {
    static let path = BuiltTool.packageRoot.appendingPathComponent("journals/golden/v2.6-attachments.journal").path

    /// The records of the golden journal, each decoded.
    static func events() throws -> [(record: JournalRecord, event: StoreEvent)] {
        try JournalReader(path: path, understands: StoreEvent.isUnderstood).readAll().records.compactMap { record in
            try StoreEvent.decode(record).map { (record, $0) }
        }
    }

    /// Every field list an event carries: operations' and rows'.
    static func fieldLists(_ event: StoreEvent) -> [[String: FieldValue]] {
        switch event {
        case .edit(let operation, let compaction):
            return [operation.fields] + compaction.compactMap { step in
                if case .replace(_, let replacement) = step { return replacement.fields }
                return nil
            }
        case .pulled(_, let rows, _, _): return rows.map(\.fields)
        case .acknowledged(let acknowledgements): return acknowledgements.map(\.row.fields)
        default: return []
        }
    }

    @Test("the 2.6 golden journal replays to exactly the state its events build: the retaken photo, a cleared photo, a deleted note gone, attachments nested in a document")
    func goldenReplaysToItsState() throws {
        let replayed = try Replayer.replay(path: Self.path).state
        #expect(replayed == SampleJournals.attachmentState())
        let tapas = try #require(replayed.visibleFields(of: RecordKey(kind: "note", id: "n-tapas")))
        #expect(tapas["photo"] == .attachment(SampleJournals.sampleAttachment("tapas-retake.jpg")))
        #expect(replayed.visibleFields(of: RecordKey(kind: "note", id: "n-market"))?["photo"] == .null)
        #expect(replayed.visibleFields(of: RecordKey(kind: "note", id: "n-receipt")) == nil)
        let scan = try #require(replayed.visibleFields(of: RecordKey(kind: "doc", id: "d-scan")))
        #expect(scan.values.flatMap(\.attachments).map(\.mediaType).sorted() == ["image/png", "image/png", "image/png", "text/plain"])
        #expect(scan["notes"] == .attachment(SampleJournals.sampleAttachment("empty.txt")))
    }

    @Test("every attachment in the golden journal names the SHA-256 and size of its sample file's bytes, and every sample file is named")
    func attachmentsNameTheirBytes() throws {
        let named = try Self.events().flatMap { Self.fieldLists($0.event) }.flatMap { $0.values.flatMap(\.attachments) }
        let byContent = Dictionary(SampleJournals.attachmentFiles.values.map { (ContentHash(bytes: SHA256.digest($0.bytes))!, $0) },
                                   uniquingKeysWith: { first, _ in first })
        for attachment in named {
            let file = try #require(byContent[attachment.content], "\(attachment) names no sample file")
            #expect(attachment.size == Int64(file.bytes.count) && attachment.mediaType == file.mediaType, "\(attachment)")
            #expect(attachment.problem == nil)
        }
        #expect(Set(named.map(\.content)) == Set(byContent.keys))
        #expect(named.contains { $0.content.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" && $0.size == 0 })
        #expect(named.contains { $0.size > 16_383 }, "a size of three varint bytes")
    }

    @Test("every record of the 2.6 golden journal re-encodes to the exact bytes it was read from, tag 12 included")
    func recordsKeepTheirBytes() throws {
        let events = try Self.events()
        #expect(events.count == 10)
        for (record, event) in events {
            #expect(event.encodedPayload() == record.payload, "record \(record.sequence) (\(record.type.name))")
        }
    }

    @Test("journal-dump shows each attachment's media type, size and hash in text, the wire JSON shape in JSON, and both in the rebuilt state")
    func dumpShowsAttachments() throws {
        let pdf = SampleJournals.sampleAttachment("menu.pdf"), retake = SampleJournals.sampleAttachment("tapas-retake.jpg")
        let text = try BuiltTool.run("journal-dump", [Self.path])
        #expect(text.status == 0)
        for line in ["create doc       d-menu            -              file=<application/pdf 70052 bytes sha256:\(pdf.content.hex.prefix(12))…>, title=\"Menu\"",
                     "update note      n-tapas           -              photo=<image/jpeg 2111 bytes sha256:\(retake.content.hex.prefix(12))…>",
                     "compaction update note      n-market          1763990000001  photo=null",
                     "row    note      n-receipt         1763990000002  scan=<text/plain 29 bytes sha256:"] {
            #expect(text.standardOutput.contains(line), "text lacks \(line)")
        }

        let json = try BuiltTool.run("journal-dump", ["--json", Self.path])
        #expect(json.status == 0)
        for member in ["\"file\":{\"attachment\":{\"sha256\":\"\(pdf.content.hex)\",\"size\":70052,\"type\":\"application/pdf\"}}",
                       "\"notes\":{\"attachment\":{\"sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"size\":0,\"type\":\"text/plain\"}}",
                       "\"pages\":{\"array\":[{\"attachment\":{\"sha256\":\"",
                       "\"cover\":{\"object\":{\"caption\":\"Front\",\"image\":{\"attachment\":{\"sha256\":\""] {
            #expect(json.standardOutput.contains(member), "JSON lacks \(member)")
        }

        let state = try BuiltTool.run("journal-dump", ["--state", Self.path])
        #expect(state.status == 0)
        #expect(state.standardOutput.contains("note      n-tapas           1763990000010  yes      photo=<image/jpeg 2111 bytes sha256:\(retake.content.hex.prefix(12))…>"))
        let stateJSON = try BuiltTool.run("journal-dump", ["--state", "--json", Self.path])
        let stateLine = try #require(stateJSON.standardOutput.split(separator: "\n").last)
        #expect(stateLine.contains("\"recordId\":\"n-tapas\",\"serverUpdatedAt\":1763990000010,\"pending\":true,\"fields\":{\"photo\":{\"attachment\":{\"sha256\":\"\(retake.content.hex)\",\"size\":2111,\"type\":\"image/jpeg\"}}"))
        #expect(!stateLine.contains("n-receipt\",\"serverUpdatedAt"), "the deleted note is not among the records")
    }

    /// Where each attachment value sits in `payload`: its tag, hash, size and media type.
    static func attachmentRanges(in payload: [UInt8]) -> [Range<Int>] {
        SampleJournals.attachmentFiles.keys.sorted().flatMap { name -> [Range<Int>] in
            let attachment = SampleJournals.sampleAttachment(name)
            var value = ByteWriter()
            value.writeUInt8(12)
            value.writeRaw(attachment.content.bytes)
            value.writeVarint(UInt64(attachment.size))
            value.writeString(attachment.mediaType)
            let bytes = value.bytes
            guard payload.count >= bytes.count else { return [] }
            return (0...(payload.count - bytes.count)).filter { payload[$0..<($0 + bytes.count)].elementsEqual(bytes) }
                .map { $0..<($0 + bytes.count) }
        }
    }

    @Test("a golden journal cut at every byte inside a record holding an attachment is damage at that record, never read, and a torn tail replays to the state before it; a flipped bit in its header or an attachment is corruption replay refuses")
    func damagedAttachmentRecordsAreReported() async throws {
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: Self.path)))
        let records = try JournalReader(path: Self.path, understands: StoreEvent.isUnderstood).readAll().records
        let targets = records.indices.filter { !Self.attachmentRanges(in: records[$0].payload).isEmpty }
        #expect(targets.map { records[$0].sequence } == [1, 2, 3, 4, 6, 7, 10])

        let directory = try TemporaryDirectory(prefix: "attachment-golden"); defer { directory.remove() }
        let path = directory.file("damaged.journal")
        func write(_ bytes: [UInt8]) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }
        var wrong: [String] = []
        var cuts = 0, flips = 0
        for index in targets {
            let record = records[index]
            let start = Int(record.offset)
            write(Array(original.prefix(start)))
            let before = try Replayer.replay(path: path).state
            for cut in (start + 1)..<(start + record.length) {
                write(Array(original.prefix(cut)))
                let (report, read) = try JournalReader(path: path, understands: StoreEvent.isUnderstood).readAll()
                let place = "record \(record.sequence) cut at \(cut)"
                if read != Array(records.prefix(index)) { wrong.append("\(place): read \(read.count) records") }
                switch report.status {
                case .tornTail(let offset, _) where offset == Int64(start):
                    if try Replayer.replay(path: path).state != before { wrong.append("\(place): another state") }
                case .corrupt(let offset, _) where offset == Int64(start):
                    if (try? Replayer.replay(path: path)) != nil { wrong.append("\(place): replayed") }
                default:
                    wrong.append("\(place): \(report.status)")
                }
                cuts += 1
            }
            // The checksums cover every payload byte alike: the header and the attachments stand for the rest.
            let payloadStart = start + JournalFormat.recordHeaderLength
            let bytes = Array(start..<payloadStart) + Self.attachmentRanges(in: record.payload).flatMap { $0.map { payloadStart + $0 } }
            for byte in bytes {
                await Task.yield()
                for bit in 0..<8 {
                    var flipped = original
                    flipped[byte] ^= UInt8(1) << UInt8(bit)
                    write(flipped)
                    let (report, read) = try JournalReader(path: path, understands: StoreEvent.isUnderstood).readAll()
                    let place = "record \(record.sequence), bit \(bit) of byte \(byte)"
                    if case .corrupt = report.status {} else { wrong.append("\(place): \(report.status)") }
                    if read != Array(records.prefix(read.count)) || read.count > index { wrong.append("\(place): read a record that differs") }
                    if (try? Replayer.replay(path: path)) != nil { wrong.append("\(place): replayed") }
                    flips += 1
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) damaged journals misread; e.g. \(wrong.prefix(3))")
        let cutBytes = targets.map { records[$0].length }.reduce(0, +)
        #expect(cuts == cutBytes - targets.count && flips > 8 * 11 * 45, "\(cuts) cuts, \(flips) flips")
    }

    @Test("a flipped bit in an attachment under checksums that match decodes as exactly the bytes it is (another hash, size or type) or is refused as malformed, never read as the value it was")
    func flippedAttachmentBitsUnderValidChecksums() throws {
        var refused = 0, decoded = 0
        for (record, event) in try Self.events() {
            for range in Self.attachmentRanges(in: record.payload) {
                for byte in range {
                    for bit in 0..<8 {
                        var payload = record.payload
                        payload[byte] ^= UInt8(1) << UInt8(bit)
                        let place = "record \(record.sequence), bit \(bit) of payload byte \(byte)"
                        do {
                            let flipped = try #require(try StoreEvent.decode(JournalRecord(offset: record.offset, sequence: record.sequence, type: record.type,
                                                                                            payload: payload, syncHorizon: record.syncHorizon)), "\(place)")
                            #expect(flipped.encodedPayload() == payload && flipped != event, "\(place)")
                            decoded += 1
                        } catch is JournalEntry.DecodeError {
                            refused += 1
                        }
                    }
                }
            }
        }
        // Hash bits read as another content; the tag, a cut size or a bad media type are refused.
        #expect(decoded > 0 && refused > 0, "\(decoded) decoded, \(refused) refused")
    }

    /// Whether `bytes` holds `pattern` anywhere.
    static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard bytes.count >= pattern.count else { return false }
        return (0...(bytes.count - pattern.count)).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }
}
