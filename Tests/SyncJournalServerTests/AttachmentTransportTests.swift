import Foundation
import SyncJournalCore
import SyncJournalHTTP
import SyncJournalProtocol
@testable import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire
import Testing

/// `HTTPTransport`'s three attachment calls against `sync-server` on SQLite
/// and (when it runs) PostgreSQL: what each answer and each refusal becomes.
@Suite("the HTTP transport's attachment calls")
struct AttachmentTransportTests {
    static func transport(_ served: AttachmentHTTPTests.Served, as user: String) -> HTTPTransport {
        HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(served.server.port)")!, token: "t-\(user)")
    }

    static func chunk(of bytes: [UInt8], from offset: Int, count: Int, content: ContentHash, declaring hash: ContentHash? = nil) -> AttachmentChunk {
        let part = Array(bytes[offset..<min(bytes.count, offset + count)])
        return AttachmentChunk(content: content, size: Int64(bytes.count), offset: Int64(offset), bytes: part,
                               bytesHash: hash ?? AttachmentHTTPTests.hash(part))
    }

    @Test("an upload in chunks reports received after each, stored after the last; status and a download in parts agree byte for byte",
          arguments: StorageBackend.tested)
    func uploadThenDownload(_ backend: StorageBackend) async throws {
        let served = try AttachmentHTTPTests.Served(backend)
        let transport = Self.transport(served, as: "alice")
        let bytes = AttachmentHTTPTests.bytes(300_000, seed: 7)
        let content = AttachmentHTTPTests.hash(bytes)
        let asked = [AttachmentStatusRequest(content: content, size: Int64(bytes.count))]

        #expect(try await transport.attachmentStatus(asked) == [AttachmentStatus(content: content, stored: false, received: 0)])
        let first = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 0, count: 128_000, content: content))
        #expect(first == AttachmentUploadProgress(received: 128_000, stored: false))
        #expect(try await transport.attachmentStatus(asked) == [AttachmentStatus(content: content, stored: false, received: 128_000)])
        _ = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 128_000, count: 128_000, content: content))
        let last = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 256_000, count: 128_000, content: content))
        #expect(last == AttachmentUploadProgress(received: 300_000, stored: true))
        #expect(try await transport.attachmentStatus(asked) == [AttachmentStatus(content: content, stored: true, received: 0)])

        var downloaded: [UInt8] = []
        while downloaded.count < bytes.count {
            let part = try await transport.downloadAttachment(content, offset: Int64(downloaded.count), length: 100_000)
            #expect(part.size == Int64(bytes.count))
            #expect(part.bytesHash == AttachmentHTTPTests.hash(part.bytes))
            downloaded += part.bytes
        }
        #expect(downloaded == bytes)
    }

    @Test("a status of more contents than one request takes is asked in several and answered in the order asked",
          arguments: StorageBackend.tested)
    func statusOfManyContents(_ backend: StorageBackend) async throws {
        let served = try AttachmentHTTPTests.Served(backend)
        let transport = Self.transport(served, as: "alice")
        let stored = AttachmentHTTPTests.bytes(1_000, seed: 3)
        try served.uploadAll(stored, as: "alice")
        var asked = (0..<2_100).map { index in
            AttachmentStatusRequest(content: AttachmentHTTPTests.hash(Array("absent \(index)".utf8)), size: 10)
        }
        asked.insert(AttachmentStatusRequest(content: AttachmentHTTPTests.hash(stored), size: 1_000), at: 1_500)
        let statuses = try await transport.attachmentStatus(asked)
        #expect(statuses.map(\.content) == asked.map(\.content))
        #expect(statuses.filter(\.stored).map(\.content) == [AttachmentHTTPTests.hash(stored)])
    }

    @Test("refusals arrive typed: a wrong offset names where to go on, a damaged chunk, a content over the largest size or the quota",
          arguments: StorageBackend.tested)
    func refusalsAreTyped(_ backend: StorageBackend) async throws {
        let served = try AttachmentHTTPTests.Served(backend) { options in
            options.maximumAttachmentBytes = 1_000_000
            options.attachmentQuotaBytes = 1_500_000
        }
        let transport = Self.transport(served, as: "alice")
        let bytes = AttachmentHTTPTests.bytes(900_000, seed: 1)
        let content = AttachmentHTTPTests.hash(bytes)
        _ = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 0, count: 400_000, content: content))

        await #expect(throws: TransportError.attachmentRefused(.wrongOffset(received: 400_000))) {
            _ = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 0, count: 400_000, content: content))
        }
        let wrongHash = AttachmentHTTPTests.hash([1, 2, 3])
        await #expect(throws: TransportError.attachmentRefused(.chunkMismatch)) {
            _ = try await transport.uploadAttachment(Self.chunk(of: bytes, from: 400_000, count: 400_000, content: content, declaring: wrongHash))
        }
        // The refused chunk left nothing behind: the upload still goes on from 400,000.
        let statuses = try await transport.attachmentStatus([AttachmentStatusRequest(content: content, size: 900_000)])
        #expect(statuses.first?.received == 400_000)

        let huge = AttachmentChunk(content: AttachmentHTTPTests.hash([9]), size: 2_000_000, offset: 0, bytes: [9], bytesHash: AttachmentHTTPTests.hash([9]))
        do {
            _ = try await transport.uploadAttachment(huge)
            Issue.record("a content over the largest size was taken")
        } catch {
            guard case .attachmentRefused(let refusal) = error, case .tooLarge = refusal else { Issue.record("\(error)"); return }
            #expect(refusal.isPermanent)
        }
        let other = AttachmentHTTPTests.bytes(700_000, seed: 2)
        do {
            _ = try await transport.uploadAttachment(Self.chunk(of: other, from: 0, count: 100_000, content: AttachmentHTTPTests.hash(other)))
            Issue.record("an upload past the quota was taken")
        } catch {
            guard case .attachmentRefused(.quotaExceeded) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test("a download of a content the user may not read is no_such_content; one past the end is a permanent bad request",
          arguments: StorageBackend.tested)
    func downloadRefusals(_ backend: StorageBackend) async throws {
        let served = try AttachmentHTTPTests.Served(backend)
        let bytes = AttachmentHTTPTests.bytes(5_000, seed: 4)
        try served.uploadAll(bytes, as: "alice")
        let content = AttachmentHTTPTests.hash(bytes)
        await #expect(throws: TransportError.attachmentRefused(.noSuchContent)) {
            _ = try await Self.transport(served, as: "carol").downloadAttachment(content, offset: 0, length: 100)
        }
        do {
            _ = try await Self.transport(served, as: "alice").downloadAttachment(content, offset: 6_000, length: 100)
            Issue.record("a download past the end was answered")
        } catch {
            guard case .permanent(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("400"))
        }
    }
}

extension AttachmentTransportTests {
    @Test("the empty content is stored for everyone: its status says so, a push may refer to it, and a download answers no bytes",
          arguments: StorageBackend.tested)
    func emptyContent(_ backend: StorageBackend) async throws {
        let served = try AttachmentHTTPTests.Served(backend)
        let transport = Self.transport(served, as: "carol")
        #expect(ContentHash.empty == AttachmentHTTPTests.hash([]))
        let statuses = try await transport.attachmentStatus([AttachmentStatusRequest(content: .empty, size: 0)])
        #expect(statuses == [AttachmentStatus(content: .empty, stored: true, received: 0)])
        let empty = SyncJournalProtocol.Attachment(content: .empty, size: 0, mediaType: "text/plain")
        #expect(try served.push(Mutations.create("n1", ["file": .attachment(empty)]), as: "carol").appliedRow != nil)
        let download = try await transport.downloadAttachment(.empty, offset: 0, length: 10)
        #expect(download.bytes.isEmpty && download.size == 0 && download.bytesHash == .empty)
    }
}
