import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// Attachments through the engine and the reference server: uploads before
/// the edits that refer to them, resumed from the last acknowledged chunk,
/// refusals that become rejections, downloads on demand. Cuts are staged
/// with injected faults and held requests, never sleeps.
@Suite("Attachments: upload before the push, resume, download", .timeLimit(.minutes(5)))
struct AttachmentSyncTests {
    typealias Attachment = SyncJournalProtocol.Attachment

    static let chunk = 64 << 10

    /// Bytes of `count` that differ per `seed`.
    static func bytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9 &+ Int(seed)) }
    }

    static func device(_ dir: TemporaryDirectory, _ name: String, server: ReferenceServer, user: String = "u1",
                       syncClock: any SyncClock = ManualClock()) async throws -> Device {
        try await Device.open(dir.file("\(name).journal"), server: server, user: user, kinds: ["note"], syncClock: syncClock,
                              attachmentChunkBytes: chunk)
    }

    static func contents(of path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test("an attachment added offline is uploaded in chunks before the push of the edit that refers to it; another device downloads it byte for byte")
    func uploadBeforePushThenDownload() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let b = try await Self.device(dir, "b", server: server)
        let bytes = Self.bytes(300_000)
        await a.faulty.setOffline(true)
        let photo = try await a.store.attach(bytes, mediaType: "image/jpeg")
        try await a.store.create("note", id: "n1", fields: ["photo": .attachment(photo)])
        #expect(await a.sync() == .skipped(.offline))
        #expect(await a.engine.status.attachmentsToUpload == 1)

        await a.faulty.setOffline(false)
        #expect(await a.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        #expect(await a.recorder.calls == ["status", "upload 0+65536", "upload 65536+65536", "upload 131072+65536",
                                           "upload 196608+65536", "upload 262144+37856", "push"])
        #expect(await server.storedContents == [photo.content])
        #expect(await a.engine.status.attachmentsToUpload == 0, "the server confirmed it: the file is part of the cache now")

        #expect(await b.sync().endedWell)
        let pulled = try #require(try await b.store.record("note", id: "n1"))
        #expect(pulled.fields["photo"] == .attachment(photo))
        #expect(try await b.store.attachmentFile(photo) == nil, "not downloaded until asked")
        let path = try await b.engine.download(photo)
        #expect(try Self.contents(of: path) == bytes)
        #expect(try await b.store.attachmentFile(photo) == path)
        let downloads = await b.recorder.calls.filter { $0.hasPrefix("download") }
        #expect(downloads == ["download 0", "download 65536", "download 131072", "download 196608", "download 262144"])
    }

    @Test("an upload whose chunk was lost on the way goes on from the last chunk the server acknowledged: that chunk alone is sent again",
          arguments: [false, true])
    func uploadResumes(replyLost: Bool) async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let bytes = Self.bytes(5 * Self.chunk)
        let file = try await a.store.attach(bytes)
        try await a.store.create("note", id: "n1", fields: ["file": .attachment(file)])
        // status, chunks 0 and 1 pass; chunk 2 is lost (before the server, or its reply after).
        await a.faulty.inject(.pass, on: .attachment, times: 3)
        await a.faulty.inject(replyLost ? .loseReply : .loseRequest, on: .attachment)
        #expect(await a.sync().isRetryLater)
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n1")) == nil, "no edit before its content")
        let before = await a.recorder.calls.count

        #expect(await a.sync().endedWell)
        let again = Array(await a.recorder.calls.dropFirst(before))
        let resumeAt = replyLost ? 3 * Self.chunk : 2 * Self.chunk
        #expect(again.first == "status")
        #expect(again.dropFirst().first == "upload \(resumeAt)+\(Self.chunk)")
        #expect(again.filter { $0.hasPrefix("upload") }.count == (replyLost ? 2 : 3))
        #expect(again.last == "push")
        #expect(await server.storedContents == [file.content])
    }

    @Test("a content over the server's largest size makes the edit that refers to it a rejection with the reason; the rest of the batch is pushed and nothing is sent again")
    func tooLargeBecomesRejection() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        await server.setAttachmentLimits(maximumBytes: 100_000)
        let a = try await Self.device(dir, "a", server: server)
        let big = try await a.store.attach(Self.bytes(200_000))
        let waiting = try await a.store.create("note", id: "big", fields: ["file": .attachment(big)])
        try await a.store.create("note", id: "plain", fields: ["text": "hello"])
        let outcome = Task { await a.store.outcome(of: waiting.operation) }

        #expect(await a.sync() == .ok(pushed: 1, pulled: 1, conflicts: 0))
        guard case .rejected(let rejection) = await outcome.value else { Issue.record("not rejected"); return }
        #expect(rejection.reason.contains("too large"))
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "plain")) != nil)
        let calls = await a.recorder.calls
        #expect(await a.sync().endedWell)
        #expect(await a.recorder.calls.filter { $0 != "push" } == calls.filter { $0 != "push" }, "the refused content is not offered again")
        #expect(try await a.store.outboxStatus().isEmpty)
    }

    @Test("a push refused because the server no longer holds the content (collected meanwhile) uploads it again and sends the edit again")
    func missingContentIsUploadedAgain() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        let a = try await Self.device(dir, "a", server: server, syncClock: clock)
        let file = try await a.store.attach(Self.bytes(10_000))
        try await a.store.create("note", id: "n1", fields: ["file": .attachment(file)])
        #expect(await a.sync().endedWell)
        try await a.store.delete("note", id: "n1")
        #expect(await a.sync().endedWell)
        await server.tick(8 * 86_400_000)
        #expect(await server.collectAttachments().contents == 1)
        #expect(await server.storedContents.isEmpty)

        // The device still has the file (confirmed, so it will not ask first).
        try await a.store.create("note", id: "n2", fields: ["file": .attachment(file)])
        let refused = await a.sync()
        #expect(refused.endedWell)
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n2")) == nil)
        _ = await clock.advance(by: .seconds(600))
        #expect(await a.sync().endedWell)
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n2"))?.fields["file"] == .attachment(file))
        #expect(await server.storedContents == [file.content])
    }

    @Test("an edit that refers to a file neither this device nor the server holds any more (a client-wins restore of a note deleted meanwhile, its file collected) is surfaced as a rejection naming the content, never left queued to fail again")
    func unobtainableContentIsRefused() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let clock = ManualClock()
        let a = try await Self.device(dir, "a", server: server)
        let c = try await Device.open(dir.file("c.journal"), server: server, kinds: ["note"], syncClock: clock,
                                      conflictPolicies: ["note": .clientWins], attachmentChunkBytes: Self.chunk)
        let file = try await a.store.attach(Self.bytes(10_000))
        try await a.store.create("note", id: "n1", fields: ["text": "tapas", "file": .attachment(file)])
        #expect(await a.sync().endedWell)
        #expect(await c.sync().endedWell)
        #expect(try await c.store.attachmentFile(file) == nil, "shown on C, never opened there")
        try await c.store.update("note", id: "n1", changes: ["text": "tapas at 8"])
        try await a.store.delete("note", id: "n1")
        #expect(await a.sync().endedWell)
        await server.tick(8 * 86_400_000)
        #expect(await server.collectAttachments().contents == 1)

        // C's edit meets the deletion; client wins brings the note back as C
        // shows it, file and all: a file nobody can upload again.
        for _ in 0..<4 {
            #expect(await c.sync().endedWell)
            _ = await clock.advance(by: .seconds(3_600))
        }
        #expect(try await c.store.outboxStatus().isEmpty, "nothing queued that can never be sent")
        let rejections = try await c.store.rejections()
        #expect(rejections.count == 1)
        #expect(rejections.first?.reason.contains(file.content.hex) == true)
        #expect(try await c.store.record("note", id: "n1") == nil, "the deletion stands")
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n1"))?.isTombstone ?? true)
    }

    @Test("an empty file is never an attachment to upload: every server holds the empty content, so the status counts none and nothing is sent for it")
    func emptyFileIsNeverToUpload() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let empty = try await a.store.attach([], mediaType: "text/plain")
        #expect(empty.content == .empty && empty.size == 0)
        try await a.store.create("note", id: "n1", fields: ["file": .attachment(empty)])
        #expect(await a.sync().endedWell)
        #expect(await a.engine.status.attachmentsToUpload == 0)
        #expect(await a.recorder.calls.allSatisfy { !$0.hasPrefix("status") && !$0.hasPrefix("upload") })
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n1"))?.fields["file"] == .attachment(empty))
    }

    @Test("two devices adding the same content: the server keeps one copy, both edits apply, and either device can download it")
    func sameContentTwice() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let b = try await Self.device(dir, "b", server: server, user: "u2")
        let bytes = Self.bytes(150_000, seed: 9)
        let fromA = try await a.store.attach(bytes)
        let fromB = try await b.store.attach(bytes)
        #expect(fromA.content == fromB.content)
        try await a.store.create("note", id: "a1", fields: ["file": .attachment(fromA)])
        try await b.store.create("note", id: "b1", fields: ["file": .attachment(fromB)])
        #expect(await a.sync().endedWell)
        #expect(await b.sync().endedWell)
        #expect(await server.storedContents == [fromA.content])
        #expect(await server.read(user: "u2", RecordKey(kind: "note", id: "b1")) != nil)
    }

    @Test("a record deleted while its file uploads: the upload finishes, the create and the delete both reach the server, and nothing is left queued")
    func deletedWhileUploading() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let file = try await a.store.attach(Self.bytes(3 * Self.chunk))
        try await a.store.create("note", id: "n1", fields: ["file": .attachment(file)])
        await a.faulty.inject(.pass, on: .attachment, times: 2)
        await a.faulty.holdNextRequest(.attachment)
        let syncing = Task { await a.sync() }
        await a.faulty.waitUntilHeld()
        let status = await a.engine.status
        #expect(status.transfers == [AttachmentTransfer(content: file.content, direction: .upload, size: Int64(3 * Self.chunk),
                                                        completed: Int64(Self.chunk))])
        try await a.store.delete("note", id: "n1")
        await a.faulty.releaseHeld()
        #expect(await syncing.value.endedWell)
        #expect(await a.sync().endedWell)
        #expect(try await a.store.outboxStatus().isEmpty)
        #expect(await server.read(user: "u1", RecordKey(kind: "note", id: "n1"))?.isTombstone ?? true)
        #expect(await a.engine.status.transfers.isEmpty)
    }

    @Test("a download cut part way goes on from the bytes that arrived when asked again, and a stranger's download is refused as no such content")
    func downloadResumesAndIsAuthorized() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Self.device(dir, "a", server: server)
        let b = try await Self.device(dir, "b", server: server)
        let stranger = try await Self.device(dir, "c", server: server, user: "u3")
        let bytes = Self.bytes(4 * Self.chunk + 7)
        let file = try await a.store.attach(bytes)
        try await a.store.create("note", id: "n1", fields: ["file": .attachment(file)])
        #expect(await a.sync().endedWell)
        #expect(await b.sync().endedWell)

        await b.faulty.inject(.pass, on: .attachment, times: 2)
        await b.faulty.inject(.transient(reason: "connection reset", retryAfter: nil), on: .attachment)
        await #expect(throws: AttachmentDownloadError.self) { _ = try await b.engine.download(file) }
        #expect(try await b.store.attachmentFile(file) == nil, "nothing partial is shown as the file")
        let path = try await b.engine.download(file)
        #expect(try Self.contents(of: path) == bytes)
        // The cut request never reached the recorder: nothing before byte 131072 was fetched twice.
        #expect(await b.recorder.calls.filter { $0.hasPrefix("download") }
                == ["download 0", "download 65536", "download 131072", "download 196608", "download 262144"])

        await #expect(throws: AttachmentDownloadError.transport(.attachmentRefused(.noSuchContent))) {
            _ = try await stranger.engine.download(file)
        }
    }

    @Test("the files of a prefetched kind are downloaded after a sync that ends well; another kind's wait until asked for")
    func prefetchedKinds() async throws {
        let dir = try TemporaryDirectory(prefix: "attachment-sync"); defer { dir.remove() }
        let server = ReferenceServer()
        let a = try await Device.open(dir.file("a.journal"), server: server, kinds: ["photo", "doc"], syncClock: ManualClock())
        let album = try await a.store.attach(Self.bytes(20_000, seed: 3), mediaType: "image/png")
        let report = try await a.store.attach(Self.bytes(30_000, seed: 4), mediaType: "application/pdf")
        try await a.store.create("photo", id: "p1", fields: ["image": .attachment(album)])
        try await a.store.create("doc", id: "d1", fields: ["file": .attachment(report)])
        #expect(await a.sync().endedWell)

        let store = try await LocalStore.open(path: dir.file("b.journal"))
        var options = SyncEngine.Options(kinds: ["photo", "doc"])
        options.prefetchedKinds = ["photo"]
        let engine = SyncEngine(store: store, transport: server.transport(user: "u1"), options: options, clock: ManualClock())
        #expect(await engine.sync().endedWell)
        #expect(try await store.attachmentFile(album) != nil, "the photo came with the sync")
        #expect(try await store.attachmentFile(report) == nil, "the document waits until asked for")
        try await store.close()
    }
}
