import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("Single bit flips")
struct BitFlipTests {
    /// How the reader took one damaged file.
    enum Outcome: Equatable {
        case notAJournal
        case unsupportedVersion
        case status(JournalStatus, [JournalRecord])
    }

    @Test("Every single-bit flip anywhere in a small journal is corruption where it is, never cut, never a wrong record",
          arguments: [JournalWriter.Mode.bulk, .durable])
    func everyBitFlipIsDetected(mode: JournalWriter.Mode) async throws {
        try await withTemporaryDirectory { directory in
            let originalPath = directory.file("original.journal")
            try await SampleJournal.write(
                [Array("alpha".utf8), [], Array("a somewhat longer third payload".utf8), Array("omega!".utf8)],
                to: originalPath, mode: mode)
            // Every record as it is in the file, the writer's closing record included.
            let records = try JournalReader(path: originalPath).readAll().records
            let original = try FileBytes.read(originalPath)
            let path = directory.file("flipped.journal")
            let reader = JournalReader(path: path)
            var checked = 0

            for index in original.indices {
                // Thousands of synchronous reads: let other tests' tasks run between bytes.
                await Task.yield()
                for bit in 0..<8 {
                    var flipped = original
                    flipped[index] ^= UInt8(1) << UInt8(bit)
                    try FileBytes.write(flipped, to: path)
                    let outcome: Outcome
                    do {
                        let (report, read) = try reader.readAll()
                        outcome = .status(report.status, read)
                    } catch JournalError.notAJournal {
                        outcome = .notAJournal
                    } catch JournalError.unsupportedVersion {
                        outcome = .unsupportedVersion
                    }
                    let place = "byte \(index) bit \(bit)"

                    // Whatever happened: never clean, never a record that differs.
                    if case .status(let status, let read) = outcome {
                        #expect(status != .clean, "\(place)")
                        #expect(read.count < records.count, "\(place)")
                        #expect(read == Array(records.prefix(read.count)), "\(place): a record differs from what was written")
                    }

                    // And the damage is reported where the flipped byte is.
                    switch index {
                    case 0..<8:
                        #expect(outcome == .notAJournal, "\(place)")
                    case 8..<JournalFormat.headerLength:
                        // The version is trusted only once the checksum verifies:
                        // a flipped version bit is damage, not a future format.
                        guard case .status(.corrupt(offset: 0, damage: .header), let read) = outcome else {
                            Issue.record("\(place): expected a corrupt header, got \(outcome)")
                            continue
                        }
                        #expect(read.isEmpty)
                    default:
                        let damaged = records.lastIndex { $0.offset <= Int64(index) }!
                        let at = records[damaged].offset
                        guard case .status(let status, let read) = outcome else {
                            Issue.record("\(place): expected a status, got \(outcome)")
                            continue
                        }
                        // Every record was durable, the last one too: a flipped bit
                        // anywhere is corruption, never a torn tail to cut.
                        #expect(status.name == "corrupt", "\(place): \(status)")
                        #expect(status.damageOffset == at, "\(place): \(status)")
                        #expect(read == Array(records.prefix(damaged)), "\(place)")
                        if index % 7 == bit {
                            // Spot checks of the writer (one per byte): it refuses and leaves the file as it was.
                            await #expect(throws: JournalError.self, "\(place)") {
                                _ = try await JournalWriter.open(path: path, options: SampleJournal.options())
                            }
                            #expect(try FileBytes.read(path) == flipped, "\(place): the file changed")
                        }
                    }
                    checked += 1
                }
            }
            #expect(checked == original.count * 8)
        }
    }
}
