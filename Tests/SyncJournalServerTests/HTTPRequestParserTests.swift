import Testing
import SyncJournalCore
@testable import SyncJournalServer

@Suite("HTTP request parser")
struct HTTPRequestParserTests {
    let parser: HTTPRequestParser = {
        var configuration = HTTPServerConfiguration()
        configuration.maximumHeaderBytes = 1_024
        configuration.maximumRequestLineBytes = 256
        configuration.maximumHeaderCount = 10
        configuration.maximumBodyBytes = 100
        return HTTPRequestParser(configuration: configuration)
    }()

    static let valid = Array("POST /v1/sync/push?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nAuthorization:  Bearer t \r\n\r\n{}".utf8)

    @Test("a valid head parses into method, target, trimmed headers and the body length")
    func validHead() throws {
        guard case .head(let head) = parser.parseHead(Self.valid) else {
            Issue.record("expected a head")
            return
        }
        #expect(head.request.method == "POST" && head.request.path == "/v1/sync/push" && head.request.target == "/v1/sync/push?x=1")
        #expect(head.request.header("AUTHORIZATION") == "Bearer t")
        #expect(head.contentLength == 2 && head.length == Self.valid.count - 2)
    }

    @Test("every prefix of a valid request is incomplete, never a failure or a request")
    func prefixes() {
        let headLength = Self.valid.count - 2
        for cut in 0..<headLength {
            let step = parser.parseHead(Array(Self.valid[0..<cut]))
            guard case .incomplete = step else {
                Issue.record("prefix of \(cut) bytes: \(step)")
                continue
            }
        }
    }

    @Test("random bytes and random damage to a valid request never crash the parser", arguments: 1...4)
    func randomInput(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        for round in 0..<2_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = random.bytes(Int(random.next() % 300))
            } else {
                bytes = Self.valid
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    let index = Int(random.next() % UInt64(bytes.count))
                    bytes[index] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            switch parser.parseHead(bytes) {
            case .head(let head):
                #expect(head.length <= bytes.count && head.contentLength <= 100)
            case .incomplete, .failure:
                break
            }
        }
    }
}
