import SyncJournalProtocol
import SyncJournalWire
import Testing

/// The attachment endpoints' bodies and refusals on the wire
/// (journals/PROTOCOL.md, "Attachments").
@Suite("attachments on the wire")
struct AttachmentWireTests {
    static let first = ContentHash(String(repeating: "ab", count: 32))!
    static let second = ContentHash(String(repeating: "0f", count: 32))!

    @Test("a status request and its reply round-trip, in the order asked")
    func statusRoundTrip() throws {
        let asked = [AttachmentStatusRequest(content: Self.first, size: 10), AttachmentStatusRequest(content: Self.second, size: 0)]
        #expect(try AttachmentStatusRequestCodec.decode(AttachmentStatusRequestCodec.encode(asked)) == asked)
        let statuses = [AttachmentStatus(content: Self.first, stored: false, received: 4), AttachmentStatus(content: Self.second, stored: true, received: 0)]
        #expect(try AttachmentStatusReplyCodec.decode(AttachmentStatusReplyCodec.encode(statuses), answering: asked) == statuses)
    }

    @Test("a status request with no contents, too many, one twice, a negative size or a bad hash is refused at its path")
    func badStatusRequests() {
        let bad = [#"{"contents":[]}"#, #"{"contents":[{"sha256":"\#(Self.first.hex)","size":-1}]}"#,
                   #"{"contents":[{"sha256":"\#(Self.first.hex.uppercased())","size":1}]}"#,
                   #"{"contents":[{"sha256":"\#(Self.first.hex)","size":1},{"sha256":"\#(Self.first.hex)","size":2}]}"#,
                   #"{"contents":[{"sha256":"\#(Self.first.hex)","size":1,"name":"a"}]}"#, #"{"contents":{}}"#]
        for text in bad { #expect(throws: WireError.self, "\(text)") { try AttachmentStatusRequestCodec.decode(Array(text.utf8)) } }
        let many = (0...ProtocolLimits.maximumAttachmentStatusContents).map { index in
            AttachmentStatusRequest(content: ContentHash(bytes: (0..<32).map { UInt8(truncatingIfNeeded: index >> ($0 % 2 == 0 ? 0 : 8)) &+ UInt8($0) })!, size: 1)
        }
        #expect(throws: WireError.self) { try AttachmentStatusRequestCodec.decode(AttachmentStatusRequestCodec.encode(many)) }
    }

    @Test("a status reply about other contents, another count, or more bytes received than the size is malformed")
    func badStatusReplies() {
        let asked = [AttachmentStatusRequest(content: Self.first, size: 10)]
        let replies = [AttachmentStatusReplyCodec.encode([AttachmentStatus(content: Self.second, stored: false, received: 0)]),
                       AttachmentStatusReplyCodec.encode([]),
                       AttachmentStatusReplyCodec.encode([AttachmentStatus(content: Self.first, stored: false, received: 11)])]
        for reply in replies { #expect(throws: WireError.self) { try AttachmentStatusReplyCodec.decode(reply, answering: asked) } }
    }

    @Test("an upload reply and a download request round-trip; a download of 0 bytes, more than a chunk, or from a negative offset is refused")
    func uploadAndDownload() throws {
        let progress = AttachmentUploadProgress(received: 4_194_304, stored: false)
        #expect(try AttachmentUploadReplyCodec.decode(AttachmentUploadReplyCodec.encode(progress)) == progress)
        let request = AttachmentDownloadRequest(content: Self.first, offset: 8, length: ProtocolLimits.maximumAttachmentChunkBytes)
        #expect(try AttachmentDownloadRequestCodec.decode(AttachmentDownloadRequestCodec.encode(request)) == request)
        for (offset, length) in [(0, 0), (0, ProtocolLimits.maximumAttachmentChunkBytes + 1), (-1, 1)] {
            let text = #"{"sha256":"\#(Self.first.hex)","offset":\#(offset),"length":\#(length)}"#
            #expect(throws: WireError.self, "\(text)") { try AttachmentDownloadRequestCodec.decode(Array(text.utf8)) }
        }
    }

    @Test("each attachment refusal's error body reads back as the same refusal, with the protocol's status and code")
    func refusalsRoundTrip() throws {
        let refusals: [AttachmentRefusal] = [.wrongOffset(received: 42), .tooLarge(reason: "over 1 GiB"), .quotaExceeded(reason: "10 GiB"),
                                             .chunkMismatch, .contentMismatch, .noSuchContent]
        for refusal in refusals {
            let body = try ErrorBodyCodec.decode(ErrorBodyCodec.encode(ErrorBody(refusal: refusal)))
            #expect(body.code == refusal.errorCode)
            #expect(body.attachmentRefusal(toUpload: true) == refusal)
        }
        #expect(AttachmentRefusal.wrongOffset(received: 0).httpStatus == 409 && AttachmentRefusal.noSuchContent.httpStatus == 404)
        #expect(ErrorBody(code: .tooLarge, message: "body").attachmentRefusal(toUpload: false) == nil, "a too_large to another request is the body's")
        #expect(ErrorBody(code: .wrongOffset, message: "no received").attachmentRefusal(toUpload: true) == nil)
    }

    @Test("upload header integers are plain decimal: no sign, no leading zero, within Int64")
    func headerIntegers() {
        #expect(AttachmentHeaders.integer("0") == 0 && AttachmentHeaders.integer("4194304") == 4_194_304)
        for bad in ["", "-1", "+1", "01", "1.0", " 1", "99999999999999999999", "9223372036854775808"] { #expect(AttachmentHeaders.integer(bad) == nil, "\(bad)") }
    }
}
