import Foundation
import SyncJournalCore
import SyncJournalPlatform
import SyncJournalProtocol
@testable import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire
import Testing

/// Attachments through `sync-server`'s HTTP router, requests sent as raw
/// bytes, on SQLite and (when it runs) PostgreSQL: `alice` uploads, `bob`
/// shares a space with her, `carol` is a stranger.
@Suite("attachments over HTTP")
struct AttachmentHTTPTests {
    static let users = ["alice", "bob", "carol"]

    /// Bytes of `count` that differ per `seed`.
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    static func hash(_ bytes: [UInt8]) -> ContentHash { ContentHash(bytes: SHA256.digest(bytes))! }

    /// A started server with the three users; restartable on the same database.
    final class Served {
        private(set) var server: SyncServer
        let options: SyncServerOptions
        let space = SpaceID.random()
        private let directory: TemporaryDirectory?
        private let schema: PostgreSQLTestSchema?

        init(_ backend: StorageBackend, configure: (inout SyncServerOptions) -> Void = { _ in }) throws {
            var options = SyncServerOptions()
            options.port = 0
            options.operationRetention = nil
            for user in AttachmentHTTPTests.users { try options.users.add(token: "t-\(user)", user: user) }
            switch backend {
            case .sqlite:
                let directory = try TemporaryDirectory(prefix: "syncjournal-attachments-http")
                options.databasePath = directory.file("sync.sqlite")
                self.directory = directory
                schema = nil
            case .postgres:
                let schema = try PostgreSQLTestSchema()
                options.postgresConnection = schema.connection
                self.schema = schema
                directory = nil
            }
            configure(&options)
            self.options = options
            server = try SyncServer(options: options)
            try server.start()
        }

        deinit {
            server.shutdown()
            directory?.remove()
        }

        /// Stops the server and starts another on the same database (a restart).
        func restart() throws {
            server.shutdown()
            server = try SyncServer(options: options)
            try server.start()
        }

        var storage: any AttachmentStorage { server.storage as! any AttachmentStorage }

        func send(_ bytes: [UInt8]) throws -> RawClient.Response {
            let client = try RawClient(port: server.port)
            try client.send(bytes)
            return try client.readResponse()
        }

        func post(_ endpoint: SyncEndpoint, _ body: [UInt8], as user: String) throws -> RawClient.Response {
            try send(SyncServerFixture.post(endpoint.path, body: body, token: "t-\(user)"))
        }

        /// An upload request as raw bytes; `chunkHash` `nil` leaves the header out.
        func upload(_ content: ContentHash, size: Int, offset: Int, _ body: [UInt8], as user: String,
                    chunkHash: ContentHash?? = .some(nil)) throws -> RawClient.Response {
            var head = "POST /v1/attachments/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
            head += "Content-Length: \(body.count)\r\nAuthorization: Bearer t-\(user)\r\n"
            head += "Sync-Content: \(content.hex)\r\nSync-Content-Size: \(size)\r\nSync-Offset: \(offset)\r\n"
            switch chunkHash {
            case .some(.some(let hash)): head += "Sync-Chunk-SHA256: \(hash.hex)\r\n"
            case .some(.none): head += "Sync-Chunk-SHA256: \(AttachmentHTTPTests.hash(body).hex)\r\n"
            case .none: break
            }
            return try send(Array((head + "\r\n").utf8) + body)
        }

        func status(_ content: ContentHash, size: Int, as user: String) throws -> AttachmentStatus {
            let asked = [AttachmentStatusRequest(content: content, size: Int64(size))]
            let response = try post(.attachmentStatus, AttachmentStatusRequestCodec.encode(asked), as: user)
            guard response.status == 200 else { throw RawClient.Failure(description: "status: \(response.status) \(response.text)") }
            return try #require(try AttachmentStatusReplyCodec.decode(response.body, answering: asked).first)
        }

        func download(_ content: ContentHash, offset: Int = 0, length: Int = 4 << 20, as user: String) throws -> RawClient.Response {
            try post(.downloadAttachment, AttachmentDownloadRequestCodec.encode(AttachmentDownloadRequest(content: content, offset: Int64(offset), length: length)),
                     as: user)
        }

        /// Uploads `bytes` whole in chunks of `chunk`.
        func uploadAll(_ bytes: [UInt8], chunk: Int = 1 << 20, as user: String) throws {
            let content = AttachmentHTTPTests.hash(bytes)
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                let response = try upload(content, size: bytes.count, offset: offset, Array(bytes[offset..<end]), as: user)
                guard response.status == 200 else { throw RawClient.Failure(description: "upload: \(response.status) \(response.text)") }
                offset = end
            }
        }

        func push(_ mutation: Mutation, as user: String) throws -> MutationOutcome {
            let body = PushRequestCodec.encode([mutation])
            var bytes = SyncServerFixture.post(SyncEndpoint.push.path, body: body, token: "t-\(user)")
            let text = String(decoding: bytes, as: UTF8.self)
            let end = try #require(text.range(of: "\r\n\r\n")).lowerBound.utf16Offset(in: text)
            bytes.insert(contentsOf: Array("Sync-Row-Members: modelVersion, space\r\n".utf8), at: end + 2)
            let response = try send(bytes)
            guard response.status == 200 else { throw RawClient.Failure(description: "push: \(response.status) \(response.text)") }
            return try #require(try PushReplyCodec.decode(response.body, answering: [mutation]).first).outcome
        }

        func change(_ change: SpaceChange, as user: String) throws {
            var bytes = SyncServerFixture.post(SyncEndpoint(change).path, body: SpaceChangeCodec.encode(change), token: "t-\(user)")
            let text = String(decoding: bytes, as: UTF8.self)
            let end = try #require(text.range(of: "\r\n\r\n")).lowerBound.utf16Offset(in: text)
            bytes.insert(contentsOf: Array("Sync-Row-Members: modelVersion, space\r\n".utf8), at: end + 2)
            let response = try send(bytes)
            guard response.status == 200 else { throw RawClient.Failure(description: "change: \(response.status) \(response.text)") }
        }
    }

    static func refusal(_ response: RawClient.Response) throws -> ErrorBody { try ErrorBodyCodec.decode(response.body) }

    @Test("a content uploaded in chunks is stored, says so in its status, and downloads byte for byte in parts, each with its hash",
          arguments: StorageBackend.tested)
    func uploadStatusDownload(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(2_500_000, seed: 1)
        let content = Self.hash(bytes)
        #expect(try served.status(content, size: bytes.count, as: "alice") == AttachmentStatus(content: content, stored: false, received: 0))
        let first = try served.upload(content, size: bytes.count, offset: 0, Array(bytes[0..<1_000_000]), as: "alice")
        #expect(first.status == 200)
        #expect(try AttachmentUploadReplyCodec.decode(first.body) == AttachmentUploadProgress(received: 1_000_000, stored: false))
        #expect(try served.status(content, size: bytes.count, as: "alice").received == 1_000_000)
        let rest = try served.upload(content, size: bytes.count, offset: 1_000_000, Array(bytes[1_000_000...]), as: "alice", chunkHash: .none)
        #expect(try AttachmentUploadReplyCodec.decode(rest.body) == AttachmentUploadProgress(received: Int64(bytes.count), stored: true))
        #expect(try served.status(content, size: bytes.count, as: "alice") == AttachmentStatus(content: content, stored: true, received: 0))
        var downloaded: [UInt8] = []
        while downloaded.count < bytes.count {
            let part = try served.download(content, offset: downloaded.count, length: 1 << 20, as: "alice")
            #expect(part.status == 200)
            #expect(part.header("Content-Type") == "application/octet-stream")
            #expect(part.header("Sync-Content-Size") == String(bytes.count))
            #expect(part.header("Sync-Chunk-SHA256") == Self.hash(part.body).hex)
            downloaded += part.body
        }
        #expect(downloaded == bytes)
        let past = try served.download(content, offset: bytes.count + 1, as: "alice")
        #expect(past.status == 400)
    }

    @Test("an upload at another offset than received is 409 wrong_offset naming it and keeps nothing; the upload goes on from there",
          arguments: StorageBackend.tested)
    func wrongOffset(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(300_000, seed: 2)
        let content = Self.hash(bytes)
        #expect(try served.upload(content, size: bytes.count, offset: 0, Array(bytes[0..<100_000]), as: "alice").status == 200)
        let wrong = try served.upload(content, size: bytes.count, offset: 200_000, Array(bytes[200_000...]), as: "alice")
        #expect(wrong.status == 409)
        #expect(try Self.refusal(wrong).code == .wrongOffset)
        #expect(try Self.refusal(wrong).received == 100_000)
        #expect(try served.status(content, size: bytes.count, as: "alice").received == 100_000)
        #expect(try served.upload(content, size: bytes.count, offset: 100_000, Array(bytes[100_000...]), as: "alice").status == 200)
        #expect(try served.download(content, as: "alice").body == bytes)
    }

    @Test("a chunk that does not match Sync-Chunk-SHA256 is 422 chunk_mismatch and nothing of it is kept", arguments: StorageBackend.tested)
    func chunkMismatch(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(200_000, seed: 3)
        let content = Self.hash(bytes)
        var damaged = Array(bytes[0..<100_000])
        damaged[5] ^= 0xFF
        let refused = try served.upload(content, size: bytes.count, offset: 0, damaged, as: "alice", chunkHash: .some(Self.hash(Array(bytes[0..<100_000]))))
        #expect(refused.status == 422)
        #expect(try Self.refusal(refused).code == .chunkMismatch)
        #expect(try served.status(content, size: bytes.count, as: "alice").received == 0)
    }

    @Test("a whole upload whose bytes do not hash to its content is 422 content_mismatch and thrown away", arguments: StorageBackend.tested)
    func contentMismatch(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(150_000, seed: 4)
        let claimed = Self.hash(Self.bytes(150_000, seed: 5))
        #expect(try served.upload(claimed, size: bytes.count, offset: 0, Array(bytes[0..<100_000]), as: "alice").status == 200)
        let last = try served.upload(claimed, size: bytes.count, offset: 100_000, Array(bytes[100_000...]), as: "alice")
        #expect(last.status == 422)
        #expect(try Self.refusal(last).code == .contentMismatch)
        #expect(try served.status(claimed, size: bytes.count, as: "alice") == AttachmentStatus(content: claimed, stored: false, received: 0))
        #expect(try served.download(claimed, as: "alice").status == 404)
    }

    @Test("a content over the largest size is 413 too_large, one past the user's quota 413 quota_exceeded; malformed heads are 400",
          arguments: StorageBackend.tested)
    func limits(_ backend: StorageBackend) throws {
        let served = try Served(backend) { options in
            options.maximumAttachmentBytes = 1_000
            options.attachmentQuotaBytes = 1_500
        }
        let big = Self.bytes(1_001, seed: 6)
        let tooLarge = try served.upload(Self.hash(big), size: big.count, offset: 0, big, as: "alice")
        #expect(tooLarge.status == 413)
        #expect(try Self.refusal(tooLarge).code == .tooLarge)
        let first = Self.bytes(1_000, seed: 7)
        try served.uploadAll(first, as: "alice")
        let second = Self.bytes(600, seed: 8)
        let over = try served.upload(Self.hash(second), size: second.count, offset: 0, Array(second[0..<100]), as: "alice")
        #expect(over.status == 413)
        #expect(try Self.refusal(over).code == .quotaExceeded)
        try served.uploadAll(second, as: "bob")
        #expect(try served.upload(Self.hash(second), size: 100, offset: 50, Array(second[0..<100]), as: "alice").status == 400, "past the size")
        #expect(try served.upload(Self.hash(second), size: 600, offset: 0, [], as: "alice").status == 400, "an empty body")
        let malformed = Array("POST /v1/attachments/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nAuthorization: Bearer t-alice\r\nSync-Content: nothex\r\nSync-Content-Size: 1\r\nSync-Offset: 0\r\n\r\nx".utf8)
        #expect(try served.send(malformed).status == 400)
    }

    @Test("a stranger's status and download answer another user's content as nonexistent until a row they can see refers to it",
          arguments: StorageBackend.tested)
    func readRule(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(10_000, seed: 9)
        let content = Self.hash(bytes)
        try served.uploadAll(bytes, as: "alice")
        for user in ["bob", "carol"] {
            #expect(try served.status(content, size: bytes.count, as: user) == AttachmentStatus(content: content, stored: false, received: 0))
            let download = try served.download(content, as: user)
            #expect(download.status == 404)
            #expect(try Self.refusal(download).code == .noSuchContent)
        }
        let unknown = try served.download(Self.hash([1, 2, 3]), as: "carol")
        let stored = try served.download(content, as: "carol")
        #expect(unknown.status == 404 && unknown.body == stored.body, "the same answer")
        try served.change(.create(served.space, name: "Trip"), as: "alice")
        try served.change(.setMember(served.space, user: "bob", role: .viewer), as: "alice")
        let attachment = Attachment(content: content, size: Int64(bytes.count), mediaType: "image/png")
        #expect(try served.push(Mutations.create("p1", ["photo": .attachment(attachment)], space: served.space), as: "alice").appliedRow != nil)
        #expect(try served.status(content, size: bytes.count, as: "bob").stored)
        #expect(try served.download(content, as: "bob").body == bytes)
        #expect(try served.download(content, as: "carol").status == 404, "not a member")
    }

    @Test("a push referring to a content the user may not read is rejected, not permanently, with the words; after the upload it applies",
          arguments: StorageBackend.tested)
    func pushRule(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(5_000, seed: 10)
        let content = Self.hash(bytes)
        let attachment = Attachment(content: content, size: Int64(bytes.count), mediaType: "image/jpeg")
        let mutation = Mutations.create("p1", ["photo": .attachment(attachment), "title": .string("x")])
        #expect(try served.push(mutation, as: "alice") == .rejected(reason: "missing content \(content.hex)", permanent: false))
        #expect(try served.push(Mutations.create("p2"), as: "alice").appliedRow != nil, "the rest of a push applies")
        try served.uploadAll(bytes, as: "bob")
        #expect(try served.push(mutation, as: "alice") == .rejected(reason: MissingContentRefusal.reason(content), permanent: false),
                "another user's upload does not make it readable")
        try served.uploadAll(bytes, as: "alice")
        #expect(try served.push(mutation, as: "alice").appliedRow?.fields["photo"] == .attachment(attachment))
    }

    @Test("two users uploading the same content keep one copy, and each may read it", arguments: StorageBackend.tested)
    func oneCopy(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(70_000, seed: 11)
        let content = Self.hash(bytes)
        try served.uploadAll(bytes, chunk: 30_000, as: "alice")
        #expect(try served.status(content, size: bytes.count, as: "bob").stored == false)
        try served.uploadAll(bytes, chunk: 40_000, as: "bob")
        #expect(try served.download(content, as: "bob").body == bytes)
        #expect(try served.download(content, as: "alice").body == bytes)
        if backend == .sqlite {
            let files = try SystemPath.entries(of: served.options.databasePath + ".attachments/content/" + String(content.hex.prefix(2)))
            #expect(files == [content.hex])
            #expect(try SystemPath.entries(of: served.options.databasePath + ".attachments/uploads").isEmpty)
        }
    }

    @Test("collection deletes unreferenced contents past the grace period and stale uploads, and keeps referenced and recent ones",
          arguments: StorageBackend.tested)
    func collection(_ backend: StorageBackend) throws {
        let served = try Served(backend) { $0.attachmentGraceMilliseconds = 3_600_000 }
        let kept = Self.bytes(4_000, seed: 12)
        let dropped = Self.bytes(4_000, seed: 13)
        let unfinished = Self.bytes(4_000, seed: 14)
        try served.uploadAll(kept, as: "alice")
        try served.uploadAll(dropped, as: "alice")
        #expect(try served.upload(Self.hash(unfinished), size: unfinished.count, offset: 0, Array(unfinished[0..<1_000]), as: "alice").status == 200)
        let attachment = Attachment(content: Self.hash(kept), size: Int64(kept.count))
        #expect(try served.push(Mutations.create("p1", ["file": .attachment(attachment)]), as: "alice").appliedRow != nil)
        let now = served.storage.attachmentClock()
        #expect(try served.storage.collectAttachments(now: now + 60_000) == AttachmentCollection(contents: 0, uploads: 0), "within the grace period")
        #expect(try served.storage.collectAttachments(now: now + 3_700_000) == AttachmentCollection(contents: 1, uploads: 1))
        #expect(try served.download(Self.hash(kept), as: "alice").body == kept)
        #expect(try served.download(Self.hash(dropped), as: "alice").status == 404)
        #expect(try served.status(Self.hash(unfinished), size: unfinished.count, as: "alice").received == 0)
    }

    @Test("a restart in the middle of an upload goes on from the recorded received; SQLite cuts back a file longer than it",
          arguments: StorageBackend.tested)
    func restartMidUpload(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let bytes = Self.bytes(200_000, seed: 15)
        let content = Self.hash(bytes)
        #expect(try served.upload(content, size: bytes.count, offset: 0, Array(bytes[0..<80_000]), as: "alice").status == 200)
        let file = served.options.databasePath + ".attachments/uploads/" + Self.hash(Array("alice".utf8)).hex + "-" + content.hex
        if backend == .sqlite {
            // A crash after a chunk was written but before its received was recorded.
            let fd = try SystemFile.open(file, .writeOnly)
            _ = try Array(repeating: UInt8(0xEE), count: 5_000).withUnsafeBytes { try SystemFile.pwrite(fd, from: $0, at: 80_000) }
            try SystemFile.close(fd)
            #expect(try SystemPath.size(file) == 85_000)
        }
        try served.restart()
        if backend == .sqlite { #expect(try SystemPath.size(file) == 80_000) }
        #expect(try served.status(content, size: bytes.count, as: "alice").received == 80_000)
        #expect(try served.upload(content, size: bytes.count, offset: 80_000, Array(bytes[80_000...]), as: "alice").status == 200)
        #expect(try served.download(content, as: "alice").body == bytes)
    }
}
