import Foundation
import SyncJournalCore
import SyncJournalStore
import SyncJournalTesting
import Testing

// A checkpoint writes the replacement journal under `<journal>.checkpoint`
// and renames it into place. A lost rename (or a tool moving the journal
// away) leaves that file alone: the store must neither open empty beside
// it, because its next checkpoint would replace the only copy of the data,
// nor delete it unless it holds nothing the journal lacks.

@Suite("Checkpoint leftovers at open")
struct CheckpointLeftoverTests {
    /// A store with a few records, checkpointed and closed: its journal is
    /// then byte for byte the file the checkpoint wrote under
    /// `.checkpoint` (nothing was appended after it). Returns the bytes and
    /// the state.
    static func checkpointedStore(at path: String) async throws -> (bytes: [UInt8], state: [StoreRecord]) {
        let store = try await LocalStore.open(path: path)
        for index in 0..<4 {
            _ = try await store.create("pin", id: "p\(index)", fields: ["n": .int(Int64(index))])
        }
        _ = try await store.update("pin", id: "p1", changes: ["n": .int(10)])
        try await store.checkpoint()
        let records = try await store.records("pin")
        try await store.close()
        return (Array(try #require(FileManager.default.contents(atPath: path))), records)
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    @Test("a journal missing beside a complete .checkpoint file takes it as the journal, as the lost rename would have: the store opens ready with every record")
    func completeCheckpointIsAdopted() async throws {
        let directory = try TemporaryDirectory(prefix: "checkpoint-adopt")
        defer { directory.remove() }
        let path = directory.file("store.journal")
        let (bytes, records) = try await Self.checkpointedStore(at: path)
        let checkpoint = path + ".checkpoint"
        try FileManager.default.moveItem(atPath: path, toPath: checkpoint)

        let store = try await LocalStore.open(path: path)
        #expect(await store.status == .ready)
        #expect(try await store.records("pin") == records)
        #expect(store.recovery?.checkpointLeftover == .adopted(from: checkpoint))
        #expect(!Self.exists(checkpoint))
        _ = try await store.create("pin", id: "after", fields: [:])
        try await store.close()
        let reopened = try await LocalStore.open(path: path)
        #expect(try await reopened.records("pin").count == records.count + 1)
        #expect(reopened.recovery?.checkpointLeftover == nil)
        try await reopened.close()
        #expect(bytes.count > 0)
    }

    @Test("a journal missing beside a .checkpoint file cut at every length short of complete is refused with a typed error naming both; nothing is created and the file is untouched")
    func incompleteCheckpointIsRefusedAtEveryLength() async throws {
        let directory = try TemporaryDirectory(prefix: "checkpoint-refuse")
        defer { directory.remove() }
        let path = directory.file("store.journal")
        let (bytes, _) = try await Self.checkpointedStore(at: path)
        try FileManager.default.removeItem(atPath: path)
        let checkpoint = path + ".checkpoint"
        var refusedLengths = 0
        for length in 0..<bytes.count {
            let cut = Array(bytes[..<length])
            Self.write(cut, to: checkpoint)
            var refused: StoreError?
            do { _ = try await LocalStore.open(path: path) } catch { refused = error }
            guard case .cannotOpen(let refusedPath, .missingBesideCheckpoint(let journal, let leftover)) = refused else {
                Issue.record("length \(length): expected missingBesideCheckpoint, got \(String(describing: refused))")
                continue
            }
            #expect(refusedPath == path && journal == path && leftover == checkpoint)
            #expect(!Self.exists(path), "length \(length): a journal was created")
            #expect(FileManager.default.contents(atPath: checkpoint).map(Array.init) == cut, "length \(length): the file changed")
            refusedLengths += 1
        }
        #expect(refusedLengths == bytes.count)
    }

    @Test("a .checkpoint file beside the journal that an interrupted checkpoint left, at every length, is proven redundant and removed; the journal opens with every record")
    func interruptedCheckpointBesideJournalIsRemovedAtEveryLength() async throws {
        let directory = try TemporaryDirectory(prefix: "checkpoint-redundant")
        defer { directory.remove() }
        // The replacement file a checkpoint of `source` writes, at full length.
        let source = directory.file("source.journal")
        let (journal, records) = try await Self.checkpointedStore(at: source)
        let store = try await LocalStore.open(path: source)
        try await store.checkpoint()
        try await store.close()
        let replacement = Array(try #require(FileManager.default.contents(atPath: source)))
        #expect(replacement != journal)

        let path = directory.file("store.journal")
        let checkpoint = path + ".checkpoint"
        for length in 0...replacement.count {
            Self.write(journal, to: path)
            Self.write(Array(replacement[..<length]), to: checkpoint)
            let reopened = try await LocalStore.open(path: path)
            #expect(await reopened.status == .ready, "length \(length)")
            #expect(try await reopened.records("pin") == records, "length \(length)")
            #expect(reopened.recovery?.checkpointLeftover == .removedRedundant(path: checkpoint, bytes: Int64(length)), "length \(length)")
            try await reopened.checkpoint()
            try await reopened.close()
            #expect(!Self.exists(checkpoint) && !Self.exists(checkpoint + "-kept"), "length \(length)")
        }
    }

    @Test("a .checkpoint file of another journal, or one starting past the journal's last record, is kept under a new name and reported; a second one gets the next name")
    func unprovenLeftoversAreKept() async throws {
        let directory = try TemporaryDirectory(prefix: "checkpoint-kept")
        defer { directory.remove() }
        let path = directory.file("store.journal")
        let (journal, records) = try await Self.checkpointedStore(at: path)
        let checkpoint = path + ".checkpoint"

        // Another journal's file (another id) under this journal's checkpoint name.
        let other = directory.file("other.journal")
        let (foreign, _) = try await Self.checkpointedStore(at: other)
        Self.write(foreign, to: checkpoint)
        var store = try await LocalStore.open(path: path)
        #expect(try await store.records("pin") == records)
        guard case .kept(let from, let keptAs, let reason) = store.recovery?.checkpointLeftover else {
            Issue.record("expected kept, got \(String(describing: store.recovery?.checkpointLeftover))")
            return
        }
        #expect(from == checkpoint && keptAs == checkpoint + "-kept" && reason.contains("another journal"))
        #expect(FileManager.default.contents(atPath: keptAs).map(Array.init) == foreign)
        try await store.checkpoint()
        try await store.close()

        // A checkpoint of this journal that starts after its last record: the
        // journal lost records the checkpoint folded, so it may hold data.
        var ahead = journal
        let header = try #require(try JournalReader(path: path).header())
        var shifted = header
        shifted.generation = 0x5EED
        shifted.continuesGeneration = header.generation
        shifted.firstSequence = header.firstSequence + 1_000
        ahead.replaceSubrange(0..<header.headerLength, with: shifted.encoded())
        Self.write(ahead, to: checkpoint)
        store = try await LocalStore.open(path: path)
        guard case .kept(_, let secondKept, let secondReason) = store.recovery?.checkpointLeftover else {
            Issue.record("expected kept, got \(String(describing: store.recovery?.checkpointLeftover))")
            return
        }
        #expect(secondKept == checkpoint + "-kept-2" && secondReason.contains("past the journal's last record"))
        #expect(FileManager.default.contents(atPath: secondKept).map(Array.init) == ahead)
        #expect(Self.exists(checkpoint + "-kept"))
        #expect(!Self.exists(checkpoint))
        try await store.close()
    }
}
