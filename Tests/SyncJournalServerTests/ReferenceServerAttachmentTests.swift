import SyncJournalCore
import SyncJournalProtocol
import SyncJournalTesting
import Testing

/// The reference server's attachments, through its transport: the rules `sync-server`'s storages decide with.
@Suite("reference server attachments")
struct ReferenceServerAttachmentTests {
    static func hash(_ bytes: [UInt8]) -> ContentHash { ContentHash(bytes: SHA256.digest(bytes))! }

    static func chunk(_ bytes: [UInt8], _ range: Range<Int>) -> AttachmentChunk {
        let part = Array(bytes[range])
        return AttachmentChunk(content: hash(bytes), size: Int64(bytes.count), offset: Int64(range.lowerBound), bytes: part, bytesHash: hash(part))
    }

    @Test("chunks upload, resume after a wrong offset, download whole; a stranger sees nothing and a push refers only to readable contents")
    func uploadReadAndPush() async throws {
        let server = ReferenceServer()
        let alice = server.transport(user: "alice")
        let carol = server.transport(user: "carol")
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let content = Self.hash(bytes)
        #expect(try await alice.uploadAttachment(Self.chunk(bytes, 0..<4_000)) == AttachmentUploadProgress(received: 4_000, stored: false))
        await #expect(throws: TransportError.attachmentRefused(.wrongOffset(received: 4_000))) {
            try await alice.uploadAttachment(Self.chunk(bytes, 6_000..<10_000))
        }
        #expect(try await alice.uploadAttachment(Self.chunk(bytes, 4_000..<10_000)).stored)
        let status = try await alice.attachmentStatus([AttachmentStatusRequest(content: content, size: 10_000)])
        #expect(status == [AttachmentStatus(content: content, stored: true, received: 0)])
        #expect(try await alice.downloadAttachment(content, offset: 0, length: 1 << 20).bytes == bytes)
        await #expect(throws: TransportError.attachmentRefused(.noSuchContent)) { try await carol.downloadAttachment(content, offset: 0, length: 10) }
        let photo = FieldValue.attachment(Attachment(content: content, size: 10_000, mediaType: "image/png"))
        let refused = try await carol.push([Mutation(operationID: OperationID.random(), kind: "pin", op: .create, recordID: "c1", fields: ["photo": photo], baseUpdatedAt: nil)])
        #expect(refused.first?.outcome == .rejected(reason: MissingContentRefusal.reason(content), permanent: false))
        let applied = try await alice.push([Mutation(operationID: OperationID.random(), kind: "pin", op: .create, recordID: "a1", fields: ["photo": photo], baseUpdatedAt: nil)])
        #expect(applied.first?.outcome.appliedRow != nil)
        await server.tick(8 * 86_400_000)
        let collected = await server.collectAttachments()
        #expect(collected.contents == 0 && collected.uploads == 0, "referenced by a live row")
        #expect(await server.storedContents == [content])
    }
}
