import SyncJournalProtocol

/// `{"contents": [{"sha256": HEX, "size": N}, …]}`: which contents a client asks about.
public enum AttachmentStatusRequestCodec {
    /// The request body.
    public static func encode(_ contents: [AttachmentStatusRequest]) -> [UInt8] {
        JSONValue.object(["contents": .array(contents.map { .object(["sha256": .string($0.content.hex), "size": .integer($0.size)]) })]).encoded()
    }

    /// The contents asked about: 1 to ``ProtocolLimits/maximumAttachmentStatusContents``, each once, sizes 0 or more.
    ///
    /// - Throws: ``WireError`` naming the member at fault.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [AttachmentStatusRequest] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["contents"])
        let items = try object.array("contents")
        let path = object.path(of: "contents")
        guard (1...ProtocolLimits.maximumAttachmentStatusContents).contains(items.count) else {
            throw .invalidValue(path: path, reason: "1 to \(ProtocolLimits.maximumAttachmentStatusContents) contents")
        }
        var seen = Set<ContentHash>()
        var contents: [AttachmentStatusRequest] = []
        for (index, item) in items.enumerated() {
            let itemPath = JSONPath.element(path, index)
            let entry = try JSONObjectReader(item, at: itemPath, allowed: ["sha256", "size"])
            let content = try AttachmentCodecs.content(entry, "sha256")
            let size = try entry.int64("size")
            if size < 0 { throw .invalidValue(path: entry.path(of: "size"), reason: "a negative size") }
            if !seen.insert(content).inserted { throw .invalidValue(path: itemPath, reason: "content \(content.hex) asked about twice") }
            contents.append(AttachmentStatusRequest(content: content, size: size))
        }
        return contents
    }
}

/// `{"contents": [{"sha256": HEX, "stored": BOOL, "received": N}, …]}`: the server's answer.
public enum AttachmentStatusReplyCodec {
    /// The reply body.
    public static func encode(_ statuses: [AttachmentStatus]) -> [UInt8] {
        JSONValue.object(["contents": .array(statuses.map {
            .object(["sha256": .string($0.content.hex), "stored": .bool($0.stored), "received": .integer($0.received)])
        })]).encoded()
    }

    /// The statuses, checked against what was asked: one per content, in the order asked.
    ///
    /// - Throws: ``WireError`` naming the member at fault.
    public static func decode(_ body: some Collection<UInt8>, answering asked: [AttachmentStatusRequest],
                              parser: JSONParser = JSONParser()) throws(WireError) -> [AttachmentStatus] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["contents"])
        let items = try object.array("contents")
        let path = object.path(of: "contents")
        guard items.count == asked.count else {
            throw .invalidValue(path: path, reason: "\(items.count) statuses for \(asked.count) contents asked about")
        }
        var statuses: [AttachmentStatus] = []
        for (index, item) in items.enumerated() {
            let entry = try JSONObjectReader(item, at: JSONPath.element(path, index), allowed: ["sha256", "stored", "received"])
            let content = try AttachmentCodecs.content(entry, "sha256")
            if content != asked[index].content {
                throw .invalidValue(path: entry.path(of: "sha256"), reason: "a status for another content than the one asked about")
            }
            let received = try entry.int64("received")
            if received < 0 || received > asked[index].size {
                throw .invalidValue(path: entry.path(of: "received"), reason: "\(received) bytes received of \(asked[index].size)")
            }
            statuses.append(AttachmentStatus(content: content, stored: try entry.bool("stored"), received: received))
        }
        return statuses
    }
}

/// `{"received": N, "stored": BOOL}`: where an upload stands after a chunk.
public enum AttachmentUploadReplyCodec {
    /// The reply body.
    public static func encode(_ progress: AttachmentUploadProgress) -> [UInt8] {
        JSONValue.object(["received": .integer(progress.received), "stored": .bool(progress.stored)]).encoded()
    }

    /// The progress.
    ///
    /// - Throws: ``WireError`` naming the member at fault.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> AttachmentUploadProgress {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["received", "stored"])
        let received = try object.int64("received")
        if received < 0 { throw .invalidValue(path: object.path(of: "received"), reason: "a negative count") }
        return AttachmentUploadProgress(received: received, stored: try object.bool("stored"))
    }
}

/// `{"sha256": HEX, "offset": N, "length": L}`: one chunk a client asks for.
public struct AttachmentDownloadRequest: Sendable, Hashable {
    /// The content.
    public var content: ContentHash
    /// Where the chunk starts.
    public var offset: Int64
    /// The most bytes wanted (1 to ``ProtocolLimits/maximumAttachmentChunkBytes``).
    public var length: Int

    /// A request.
    public init(content: ContentHash, offset: Int64, length: Int) {
        self.content = content
        self.offset = offset
        self.length = length
    }
}

/// The JSON of an ``AttachmentDownloadRequest``.
public enum AttachmentDownloadRequestCodec {
    /// The request body.
    public static func encode(_ request: AttachmentDownloadRequest) -> [UInt8] {
        JSONValue.object(["sha256": .string(request.content.hex), "offset": .integer(request.offset),
                          "length": .integer(Int64(request.length))]).encoded()
    }

    /// The request, its offset 0 or more and its length 1 to the chunk maximum.
    ///
    /// - Throws: ``WireError`` naming the member at fault.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> AttachmentDownloadRequest {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["sha256", "offset", "length"])
        let content = try AttachmentCodecs.content(object, "sha256")
        let offset = try object.int64("offset")
        if offset < 0 { throw .invalidValue(path: object.path(of: "offset"), reason: "a negative offset") }
        let length = try object.int64("length")
        guard (1...Int64(ProtocolLimits.maximumAttachmentChunkBytes)).contains(length) else {
            throw .invalidValue(path: object.path(of: "length"), reason: "1 to \(ProtocolLimits.maximumAttachmentChunkBytes) bytes")
        }
        return AttachmentDownloadRequest(content: content, offset: offset, length: Int(length))
    }
}

/// What the attachment codecs share.
enum AttachmentCodecs {
    /// The content named by member `name`: 64 lowercase hex digits.
    static func content(_ object: JSONObjectReader, _ name: String) throws(WireError) -> ContentHash {
        let text = try object.string(name)
        guard let content = ContentHash(text) else {
            throw .invalidValue(path: object.path(of: name), reason: "\"\(text)\" is not 64 lowercase hex digits")
        }
        return content
    }
}
