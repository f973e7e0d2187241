import SyncJournalCore
import SyncJournalTesting
import Testing

@Suite("File header")
struct JournalHeaderTests {
    @Test("A header encodes to 80 bytes starting with the magic and decodes to the same value")
    func encodeDecodeRoundTrip() throws {
        let header = JournalHeader(journalID: JournalID(bytes: Array(100..<116))!, generation: 0xDEAD_BEEF_0000_0042,
                                   continuesGeneration: 0x1234_5678_9ABC_DEF0, firstSequence: 77,
                                   createdAtMilliseconds: -5)
        let bytes = header.encoded()
        #expect(bytes.count == JournalFormat.headerLength)
        #expect(Array(bytes[0..<8]) == [0x89, 0x53, 0x4A, 0x52, 0x4E, 0x0D, 0x0A, 0x1A])
        #expect(Array(bytes[8..<16]) == [2, 0, 0, 0, 80, 0, 0, 0])
        let stored = UInt32(bytes[76]) | UInt32(bytes[77]) << 8 | UInt32(bytes[78]) << 16 | UInt32(bytes[79]) << 24
        #expect(stored == CRC32C.mask(CRC32C.checksum(bytes[0..<76])))
        let decoded = try JournalHeader.decode(bytes)
        #expect(decoded == header)
        #expect(decoded.firstSequence == 77)
        #expect(decoded.continuesGeneration == 0x1234_5678_9ABC_DEF0)
    }

    @Test("A file whose magic differs is refused as not a journal, by the reader and the writer, and left as it was")
    func wrongMagicIsNotAJournal() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("magic.journal")
            try await SampleJournal.write(SampleJournal.payloads(2), to: path)
            var bytes = try FileBytes.read(path)
            bytes[1] = UInt8(ascii: "X")
            try FileBytes.write(bytes, to: path)
            #expect(throws: JournalError.notAJournal(path: path)) { try JournalReader(path: path).scan() }
            await #expect(throws: JournalError.notAJournal(path: path)) {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == bytes)

            for other: [UInt8] in [[], Array("hello, world\n".utf8), [0x89, 0x53, 0x4A, 0x52, 0x4E, 0x0D, 0x0A, 0x0A]] {
                try FileBytes.write(other, to: path)
                #expect(throws: JournalError.notAJournal(path: path)) { try JournalReader(path: path).scan() }
            }
        }
    }

    @Test("A file that stops inside the header after the right magic is a corrupt journal (truncated header), not a foreign file",
          arguments: [3, 8, 15, 16, 40, 79])
    func truncatedHeaderIsCorrupt(length: Int) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("short-header.journal")
            try FileBytes.write(Array(SampleJournal.header().encoded().prefix(length)), to: path)
            let report = try JournalReader(path: path).scan()
            #expect(report.status == .corrupt(offset: 0, damage: .header(.truncated(length: length))))
            #expect(report.header == nil)
        }
    }

    @Test("An unknown major version with a valid header checksum is refused as unsupported, naming the version")
    func unknownMajorVersionIsUnsupported() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("version.journal")
            try await SampleJournal.write(SampleJournal.payloads(2), to: path)
            var bytes = try FileBytes.read(path)
            FileBytes.patchUInt16(&bytes, at: 8, 3)
            // Re-seal the header so that the version is the only thing wrong.
            FileBytes.patchUInt32(&bytes, at: 76, CRC32C.mask(CRC32C.checksum(bytes[0..<76])))
            try FileBytes.write(bytes, to: path)
            #expect(throws: JournalError.unsupportedVersion(path: path, major: 3, minor: 0)) {
                try JournalReader(path: path).scan()
            }
            await #expect(throws: JournalError.unsupportedVersion(path: path, major: 3, minor: 0)) {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            }
            #expect(try FileBytes.read(path) == bytes)
        }
    }

    @Test("Damage anywhere in the header's checksummed bytes reads as corrupt at offset 0, and the writer refuses it untouched",
          arguments: [10, 16, 35, 50, 70, 76, 79])
    func headerChecksumDamageIsCorruptAtZero(byte: Int) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("header.journal")
            try await SampleJournal.write(SampleJournal.payloads(2), to: path)
            var bytes = try FileBytes.read(path)
            bytes[byte] ^= 0x04
            try FileBytes.write(bytes, to: path)
            let (report, records) = try JournalReader(path: path).readAll()
            guard case .corrupt(offset: 0, damage: .header) = report.status else {
                Issue.record("expected corrupt header at offset 0, got \(report.status)")
                return
            }
            #expect(report.header == nil)
            #expect(records.isEmpty)
            await #expect {
                try await JournalWriter.open(path: path, options: SampleJournal.options())
            } throws: { error in
                guard case JournalError.corrupt(path: path, offset: 0, damage: _) = error else { return false }
                return true
            }
            #expect(try FileBytes.read(path) == bytes)
        }
    }
}
