import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalTestSupport
import SyncJournalTesting
import Testing

/// A store's attachment files beside its journal: written durably before
/// the edit that refers to them, kept once per content, never a partial
/// file under a content's name whatever a crash leaves, and removed only
/// when nothing refers to them past the grace period.
@Suite("attachment files beside the journal")
struct AttachmentStoreTests {
    typealias Kit = StoreRulesKit
    static let photo = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }

    @Test("an attached file is copied beside the journal under its SHA-256, the same bytes twice are kept once, and a record refers to it across a reopen")
    func attachAndReopen() async throws {
        try await Kit.withScratch { scratch in
            let source = scratch.file("tapas.jpg")
            try Data(Self.photo).write(to: URL(fileURLWithPath: source))
            let store = try await Kit.open(scratch.journal)
            let photo = try await store.attach(fileAt: source, mediaType: "image/jpeg")
            #expect(photo.content.bytes == SHA256.digest(Self.photo) && photo.size == Int64(Self.photo.count) && photo.mediaType == "image/jpeg")
            let again = try await store.attach(Self.photo, mediaType: "image/jpeg")
            #expect(again == photo)
            let files = try await store.attachmentStore.contents()
            #expect(files.count == 1 && files.first?.place == .pending)
            try await store.create("pin", id: "p1", fields: ["photo": .attachment(photo)])
            let path = try #require(try await store.attachmentFile(photo))
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == Self.photo)
            try await store.close()

            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.record("pin", id: "p1")?.fields["photo"] == .attachment(photo))
            #expect(try await reopened.attachmentFile(photo) == path)
            try await reopened.close()
        }
    }

    @Test("a media type that is not type/subtype is refused and nothing is kept; a read-only store refuses to attach")
    func refusals() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            #expect(await Kit.storeError { _ = try await store.attach([1, 2], mediaType: "jpeg") } == .invalidAttachment(
                reason: SyncJournalProtocol.Attachment(content: ContentHash(bytes: [UInt8](repeating: 0, count: 32))!, size: 0, mediaType: "jpeg").problem!))
            try await store.close()
            var options = Kit.options()
            options.readOnly = true
            let reader = try await LocalStore.open(path: scratch.journal, options: options)
            #expect(await Kit.storeError { _ = try await reader.attach([1], mediaType: "text/plain") } == .readOnly(path: scratch.journal))
            try await reader.close()
        }
    }

    @Test("an edit holding an attachment with a negative size or a media type that is not type/subtype, alone or nested, is refused before it is journaled, and the journal stays readable")
    func invalidAttachmentsAreNeverJournaled() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let empty = ContentHash(bytes: SHA256.digest([UInt8]()))!
            let good = SyncJournalProtocol.Attachment(content: empty, size: 0, mediaType: "text/plain")
            let negative = SyncJournalProtocol.Attachment(content: empty, size: -1, mediaType: "text/plain")
            let untyped = SyncJournalProtocol.Attachment(content: empty, size: 0, mediaType: "jpeg")
            try await store.create("pin", id: "p1", fields: ["photo": .attachment(good)])
            for (fields, reason) in [(["photo": FieldValue.attachment(negative)], "field \"photo\": \(negative.problem!)"),
                                     (["pages": .array([.attachment(good), .attachment(untyped)])], "field \"pages\": \(untyped.problem!)"),
                                     (["cover": .object(["image": .attachment(untyped)])], "field \"cover\": \(untyped.problem!)")] {
                #expect(await Kit.storeError { try await store.create("pin", id: "p2", fields: fields) }
                    == .invalidFields(kind: "pin", id: "p2", reason: reason))
                #expect(await Kit.storeError { try await store.update("pin", id: "p1", changes: fields) }
                    == .invalidFields(kind: "pin", id: "p1", reason: reason))
            }
            try await store.close()

            let reopened = try await Kit.open(scratch.journal)
            #expect(try await reopened.record("pin", id: "p1")?.fields == ["photo": .attachment(good)])
            #expect(try await reopened.record("pin", id: "p2") == nil)
            try await reopened.close()
        }
    }

    @Test("a power cut at every system call of an attach leaves no file or the whole file under the content's name, and an attach that returned survives every cut")
    func everyCrashPoint() async throws {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let content = ContentHash(bytes: SHA256.digest(bytes))!
        let pending = "/device/store.journal.attachments/pending/" + content.hex
        // The calls of an attach on a store that never made its directory.
        func attempt(freezingAfter calls: Int?, seed: UInt64) async throws -> (returned: Bool, disk: SimulatedDisk) {
            let disk = SimulatedDisk()
            disk.createDirectory("/device")
            let store = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
            if let calls { disk.freeze(afterCalls: calls) }
            var returned = false
            do { _ = try await store.attach(bytes, mediaType: "application/pdf"); returned = true } catch {
                if calls == nil { Issue.record("an attach on a healthy disk failed: \(error)") }
            }
            try? await store.close()
            _ = disk.crash(.random(seed: seed))
            return (returned, disk)
        }
        // Unfrozen, the attach succeeds and its file survives any cut.
        let whole = try await attempt(freezingAfter: nil, seed: 1)
        #expect(whole.returned && whole.disk.contents(of: pending).map { SHA256.digest($0) == content.bytes } == true)
        var points = 0
        var survived = 0
        for calls in 0..<40 {
            for seed in 0..<4 as Range<UInt64> {
                let (returned, disk) = try await attempt(freezingAfter: calls, seed: seed &* 31 &+ UInt64(calls))
                let store = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
                let kept = try await store.attachmentStore.contents()
                #expect(kept.allSatisfy { $0.content == content && $0.size == Int64(bytes.count) }, "calls \(calls) seed \(seed)")
                if let file = disk.contents(of: pending) {
                    #expect(SHA256.digest(file) == content.bytes, "a partial file under the content's name after \(calls) calls, seed \(seed)")
                    survived += 1
                }
                if returned { #expect(disk.contents(of: pending) != nil, "an acknowledged attach lost after \(calls) calls, seed \(seed)") }
                #expect(disk.files(in: "/device/store.journal.attachments/incoming").isEmpty, "reopening clears what a write left")
                try await store.close()
                points += 1
            }
        }
        #expect(points == 160 && survived > 0)
    }

    @Test("a file a record or queued edit refers to is kept; one nothing refers to is removed only after the grace period")
    func collection() async throws {
        try await Kit.withScratch { scratch in
            let clock = ManualClock()
            var options = LocalStore.Options(system: PosixSystemCalls(), clock: clock, upkeep: .off)
            options.attachmentGrace = .seconds(60)
            let store = try await LocalStore.open(path: scratch.journal, options: options)
            let kept = try await store.attach([1, 2, 3], mediaType: "text/plain")
            let dropped = try await store.attach([4, 5, 6], mediaType: "text/plain")
            try await store.create("note", id: "n1", fields: ["file": .attachment(kept)])
            #expect(try await store.collectAttachments() == AttachmentCollection())
            _ = await clock.advance(by: .seconds(61))
            #expect(try await store.collectAttachments() == AttachmentCollection(removed: 1, evicted: 0))
            #expect(try await store.attachmentFile(kept) != nil)
            #expect(try await store.attachmentFile(dropped) == nil)
            // Deleting the record while its create is queued cancels both: the file is unreferenced from then on.
            try await store.delete("note", id: "n1")
            _ = try await store.collectAttachments()
            #expect(try await store.attachmentFile(kept) != nil, "within the grace period")
            _ = await clock.advance(by: .seconds(61))
            _ = try await store.collectAttachments()
            #expect(try await store.attachmentFile(kept) == nil)
            try await store.close()
        }
    }

    @Test("past the cache limit the least recently used cached files are evicted; files the server does not hold yet never are")
    func eviction() async throws {
        try await Kit.withScratch { scratch in
            var options = Kit.options()
            options.attachmentCacheBytes = 250
            let store = try await LocalStore.open(path: scratch.journal, options: options)
            let files = attachments(count: 4, size: 100)
            var made: [SyncJournalProtocol.Attachment] = []
            for bytes in files { made.append(try await store.attach(bytes, mediaType: "application/octet-stream")) }
            // Records the server sent refer to them; no queued edit does (its files are never evicted).
            let rows = made.enumerated().map { index, attachment in
                ServerRow(kind: "doc", id: "d\(index)", fields: ["file": .attachment(attachment)], updatedAt: Int64(index + 1))
            }
            try await store.applyPulledPage(kind: "doc", rows: rows, cursor: PullCursor(updatedAt: 4, id: "d3"))
            #expect(try await store.collectAttachments().evicted == 0, "all four are pending")
            for attachment in made.prefix(3) { try await store.attachmentStore.confirmStored(attachment.content) }
            _ = try await store.attachmentFile(made[0])   // used recently
            let collected = try await store.collectAttachments()
            #expect(collected.evicted == 1)
            #expect(try await store.attachmentFile(made[1]) == nil, "the least recently used cached file")
            for index in [0, 2, 3] { #expect(try await store.attachmentFile(made[index]) != nil, "\(index)") }
            try await store.close()
        }
    }

    @Test("a power cut at every system call of marking a content uploaded leaves it once, whole, pending or cached; once the mark returned, cached")
    func everyCrashPointOfConfirmingUpload() async throws {
        let bytes = (0..<7_000).map { UInt8(truncatingIfNeeded: $0 &* 29) }
        let content = ContentHash(bytes: SHA256.digest(bytes))!
        var points = 0
        for calls in 0..<16 {
            for seed in 0..<4 as Range<UInt64> {
                let disk = SimulatedDisk()
                disk.createDirectory("/device")
                let store = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
                _ = try await store.attach(bytes, mediaType: "image/png")
                disk.freeze(afterCalls: calls)
                var returned = false
                do { try await store.attachmentStore.confirmStored(content); returned = true } catch {}
                try? await store.close()
                _ = disk.crash(.random(seed: seed &* 17 &+ UInt64(calls)))
                let reopened = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
                let kept = try await reopened.attachmentStore.contents()
                #expect(kept.map(\.content) == [content], "calls \(calls) seed \(seed)")
                let path = try #require(try await reopened.attachmentStore.file(of: content))
                #expect(disk.contents(of: path).map { SHA256.digest($0) == content.bytes } == true, "calls \(calls) seed \(seed)")
                if returned { #expect(kept.first?.place == .cached, "a mark that returned was lost after \(calls) calls, seed \(seed)") }
                try await reopened.close()
                points += 1
            }
        }
        #expect(points == 64)
    }

    @Test("a power cut at every system call of a download leaves no file or the whole file under the content's name, and a download that returned survives")
    func everyCrashPointOfDownload() async throws {
        let bytes = (0..<9_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let attachment = SyncJournalProtocol.Attachment(content: ContentHash(bytes: SHA256.digest(bytes))!, size: Int64(bytes.count))
        let cached = "/device/store.journal.attachments/cached/" + attachment.content.hex
        var points = 0
        var kept = 0
        for calls in 0..<24 {
            for seed in 0..<4 as Range<UInt64> {
                let disk = SimulatedDisk()
                disk.createDirectory("/device")
                let store = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
                _ = try await store.attachmentStore.contents()
                disk.freeze(afterCalls: calls)
                var returned = false
                do {
                    _ = try await store.attachmentStore.download(attachment) { offset in Array(bytes[Int(offset)..<min(Int(offset) + 2_000, bytes.count)]) }
                    returned = true
                } catch {}
                try? await store.close()
                _ = disk.crash(.random(seed: seed &* 13 &+ UInt64(calls)))
                let reopened = try await LocalStore.open(path: "/device/store.journal", options: Kit.options(system: disk))
                if let file = disk.contents(of: cached) {
                    #expect(SHA256.digest(file) == attachment.content.bytes, "a partial file under the content's name after \(calls) calls, seed \(seed)")
                    #expect(try await reopened.attachmentFile(attachment) == cached)
                    kept += 1
                } else {
                    #expect(try await reopened.attachmentFile(attachment) == nil)
                }
                if returned { #expect(disk.contents(of: cached) != nil, "a download that returned was lost after \(calls) calls, seed \(seed)") }
                try await reopened.close()
                points += 1
            }
        }
        #expect(points == 96 && kept > 0)
    }

    @Test("a cached file a queued edit refers to is never evicted, however full the cache: the server may lose it before the edit arrives, and the edit is uploaded from it again; once the edit has left the queue it is evicted like any other")
    func queuedFilesAreNotEvicted() async throws {
        try await Kit.withScratch { scratch in
            var options = Kit.options()
            options.attachmentCacheBytes = 50
            let store = try await LocalStore.open(path: scratch.journal, options: options)
            var made: [SyncJournalProtocol.Attachment] = []
            for bytes in attachments(count: 3, size: 100) { made.append(try await store.attach(bytes, mediaType: "application/octet-stream")) }
            try await store.create("doc", id: "d0", fields: ["file": .attachment(made[0])])
            try await store.create("doc", id: "d1", fields: ["file": .attachment(made[1])])
            try await store.applyPulledPage(kind: "doc", rows: [ServerRow(kind: "doc", id: "d2", fields: ["file": .attachment(made[2])], updatedAt: 1)],
                                            cursor: PullCursor(updatedAt: 1, id: "d2"))
            for attachment in made { try await store.attachmentStore.confirmStored(attachment.content) }
            _ = try await store.attachmentFile(made[2])   // the pulled record's file is the most recently used

            #expect(try await store.collectAttachments().evicted == 1, "only the pulled record's file may go")
            #expect(try await store.attachmentFile(made[2]) == nil)
            for index in 0..<2 { #expect(try await store.attachmentFile(made[index]) != nil, "d\(index)'s create is queued") }

            // d0's create is acknowledged: its file is part of the cache now, past the bound.
            let batch = try await store.beginSending(limit: 1, excluding: [])
            let id = try #require(batch.operations.first?.id)
            try await store.endSending([id], outcomes: [(id, .acknowledged(ServerRow(kind: "doc", id: "d0", fields: ["file": .attachment(made[0])],
                                                                                     updatedAt: 2)))])
            #expect(try await store.attachmentStore.contents().map(\.content).sorted(by: <) == [made[0].content, made[1].content].sorted(by: <))
            #expect(try await store.collectAttachments().evicted == 1)
            #expect(try await store.attachmentFile(made[0]) == nil)
            #expect(try await store.attachmentFile(made[1]) != nil, "d1's create is still queued")
            try await store.close()
        }
    }

    @Test("after a reopen, cached files not used since are evicted in the order of their names, never in hash order: the same journal evicts the same files every time")
    func evictionAfterReopenFollowsNames() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            var made: [SyncJournalProtocol.Attachment] = []
            for bytes in attachments(count: 6, size: 100) { made.append(try await store.attach(bytes, mediaType: "application/octet-stream")) }
            let rows = made.enumerated().map { index, attachment in
                ServerRow(kind: "doc", id: "d\(index)", fields: ["file": .attachment(attachment)], updatedAt: Int64(index + 1))
            }
            try await store.applyPulledPage(kind: "doc", rows: rows, cursor: PullCursor(updatedAt: 6, id: "d5"))
            for attachment in made { try await store.attachmentStore.confirmStored(attachment.content) }
            try await store.close()

            var options = Kit.options()
            options.attachmentCacheBytes = 250
            let reopened = try await LocalStore.open(path: scratch.journal, options: options)
            #expect(try await reopened.collectAttachments().evicted == 4)
            let kept = try await reopened.attachmentStore.contents().map(\.content)
            #expect(kept == Array(made.map(\.content).sorted(by: <).suffix(2)), "the two last by name")
            try await reopened.close()
        }
    }

    @Test("a download is kept only whole and hashing to its name; damaged or short bytes keep nothing")
    func downloads() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0) }
            let attachment = SyncJournalProtocol.Attachment(content: ContentHash(bytes: SHA256.digest(bytes))!, size: Int64(bytes.count), mediaType: "image/png")
            let damaged = bytes.enumerated().map { $0.offset == 4_000 ? $0.element ^ 1 : $0.element }
            await #expect(throws: AttachmentDownloadError.damaged(attachment.content)) {
                _ = try await store.attachmentStore.download(attachment) { offset in Array(damaged[Int(offset)..<min(Int(offset) + 1_000, damaged.count)]) }
            }
            #expect(try await store.attachmentFile(attachment) == nil)
            let path = try await store.attachmentStore.download(attachment) { offset in Array(bytes[Int(offset)..<min(Int(offset) + 1_000, bytes.count)]) }
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
            #expect(try await store.attachmentStore.place(of: attachment.content) == .cached)
            try await store.close()
        }
    }

    @Test("a file whose bytes rotted on disk is reported as damaged, never passed on as the content")
    func rotIsReported() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let attachment = try await store.attach(Self.photo, mediaType: "image/jpeg")
            let path = try #require(try await store.attachmentFile(attachment))
            var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[1234] ^= 0x10
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            await #expect(throws: StoreError.attachmentDamaged(attachment.content, path: path)) { try await store.attachmentStore.verify(attachment.content) }
            try await store.close()
        }
    }

    private func attachments(count: Int, size: Int) -> [[UInt8]] {
        (0..<count).map { index in (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index &* 101) } }
    }
}
