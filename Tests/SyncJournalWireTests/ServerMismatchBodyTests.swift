import SyncJournalProtocol
import SyncJournalWire
import Testing

/// The `server_mismatch` error body and the identity headers, as the wire
/// writes and reads them.
@Suite("Wire: server_mismatch bodies and identity headers")
struct ServerMismatchBodyTests {
    static let a = ServerIdentity("server-a")!
    static let b = ServerIdentity("server_B-2")!

    @Test("both mismatches round-trip through the body, and the body's members say which", arguments: [
        ServerMismatch.differentServer(expected: a, found: b),
        ServerMismatch.behind(identity: a, seenStamp: 1_764_000_000_123, latestStamp: -4),
    ])
    func roundTrip(_ mismatch: ServerMismatch) throws {
        let body = ErrorBodyCodec.encode(ErrorBody(mismatch: mismatch))
        let decoded = try ErrorBodyCodec.decode(body)
        #expect(decoded.code == .serverMismatch)
        #expect(decoded.mismatch == mismatch)
        #expect(decoded == ErrorBody(mismatch: mismatch))
    }

    @Test("bodies without the new members decode as before, and other codes never read as a mismatch")
    func absentMembers() throws {
        let plain = try ErrorBodyCodec.decode(Array(#"{"error":"cursor_expired","message":"m","kinds":["pin"]}"#.utf8))
        #expect(plain.expected == nil && plain.found == nil && plain.seenStamp == nil && plain.latestStamp == nil)
        #expect(plain.mismatch == nil)
        let other = try ErrorBodyCodec.decode(Array(#"{"error":"bad_request","message":"m","expected":"a","found":"b"}"#.utf8))
        #expect(other.mismatch == nil)
        #expect(ErrorBodyCodec.encode(ErrorBody(code: .badRequest, message: "m")) == Array(#"{"error":"bad_request","message":"m"}"#.utf8))
    }

    @Test("a member of the wrong shape is refused with its path", arguments: [
        #"{"error":"server_mismatch","message":"m","expected":"has space"}"#,
        #"{"error":"server_mismatch","message":"m","found":""}"#,
        #"{"error":"server_mismatch","message":"m","found":7}"#,
        #"{"error":"server_mismatch","message":"m","seenStamp":"7"}"#,
        #"{"error":"server_mismatch","message":"m","latestStamp":1.5}"#,
        #"{"error":"server_mismatch","message":"m","found":"\#(String(repeating: "x", count: 65))"}"#,
    ])
    func wrongShapes(_ text: String) {
        #expect(throws: WireError.self) { try ErrorBodyCodec.decode(Array(text.utf8)) }
    }

    @Test("the identity headers: what parses, and what is refused naming the header")
    func headers() throws {
        #expect(try ServerIdentityHeaders.expectation(identities: [], seenStamps: []) == nil)
        #expect(try ServerIdentityHeaders.expectation(identities: ["server-a"], seenStamps: []) == ServerExpectation(identity: Self.a, seenStamp: nil))
        #expect(try ServerIdentityHeaders.expectation(identities: ["server-a"], seenStamps: ["-12"]) == ServerExpectation(identity: Self.a, seenStamp: -12))
        #expect(try ServerIdentityHeaders.expectation(identities: ["server-a"], seenStamps: ["9223372036854775807"])?.seenStamp == .max)
        let refused: [([String], [String], String)] = [
            (["a", "a"], [], ServerIdentityHeaders.identity),
            (["a b"], [], ServerIdentityHeaders.identity),
            ([""], [], ServerIdentityHeaders.identity),
            (["a"], ["1", "1"], ServerIdentityHeaders.seenStamp),
            (["a"], [""], ServerIdentityHeaders.seenStamp),
            (["a"], ["-"], ServerIdentityHeaders.seenStamp),
            (["a"], ["+1"], ServerIdentityHeaders.seenStamp),
            (["a"], ["1.0"], ServerIdentityHeaders.seenStamp),
            (["a"], ["9223372036854775808"], ServerIdentityHeaders.seenStamp),
            ([], ["1"], ServerIdentityHeaders.seenStamp),
        ]
        for (identities, stamps, named) in refused {
            do {
                _ = try ServerIdentityHeaders.expectation(identities: identities, seenStamps: stamps)
                Issue.record("\(identities) \(stamps) accepted")
            } catch {
                #expect(error.description.contains(named), "\(identities) \(stamps): \(error)")
            }
        }
        let headers = ServerIdentityHeaders.headers(for: ServerExpectation(identity: Self.a, seenStamp: 5))
        #expect(headers.map(\.name) == ["Sync-Server-Identity", "Sync-Seen-Stamp"] && headers.map(\.value) == ["server-a", "5"])
        #expect(ServerIdentityHeaders.identity(in: " server-a ") == Self.a)
        #expect(ServerIdentityHeaders.identity(in: "bad id") == nil && ServerIdentityHeaders.identity(in: nil) == nil)
    }
}
