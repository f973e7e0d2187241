import Foundation
import SyncJournalProtocol
import SyncJournalWire
import Testing

@Suite("Spaces on the wire: malformed members are refused at their paths")
struct MalformedSpaceMessageTests {
    static let trip = SpaceSamples.tripText
    static let upper = SpaceSamples.tripText.uppercased()
    static let notSpaceID = #"is not a space id (lowercase 8-4-4-4-12 hex)"#

    static func mutation(_ space: String) -> [UInt8] {
        bytes(#"{"mutations":[{"operationId":"01010203-0405-4607-8809-0a0b0c0d0e01","kind":"pin","op":"create","recordId":"p1","baseUpdatedAt":null,"fields":{},"space":\#(space)}]}"#)
    }

    static func pull(_ spaces: String) -> [UInt8] {
        bytes(#"{"cursors":{"pin":null},"limit":5,"resync":false,"spaces":\#(spaces)}"#)
    }

    static func space(_ members: String) -> [UInt8] {
        bytes(#"{"space":{"space":"\#(trip)",\#(members)}}"#)
    }

    static let goodSpace = #""name":"Trip","role":"owner","members":[{"role":"owner","user":"dad"},{"role":"viewer","user":"kid"}],"version":3"#

    @Test("a mutation's space in uppercase, not a UUID, null or not a string is refused by the value and the byte reader alike")
    func mutationSpace() throws {
        let cases: [(String, WireError)] = [
            ("\"\(Self.upper)\"", .invalidValue(path: "$.mutations[0].space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (#""trip""#, .invalidValue(path: "$.mutations[0].space", reason: "\"trip\" \(Self.notSpaceID)")),
            (#""""#, .invalidValue(path: "$.mutations[0].space", reason: "\"\" \(Self.notSpaceID)")),
            ("null", .wrongType(path: "$.mutations[0].space", expected: "a string")),
            ("7", .wrongType(path: "$.mutations[0].space", expected: "a string")),
            ("{}", .wrongType(path: "$.mutations[0].space", expected: "a string")),
        ]
        for (value, expected) in cases {
            #expect(wireError { try PushRequestCodec.decode(Self.mutation(value)) } == expected, "\(value)")
            #expect(wireError { try PushRequestCodec.decodeEncoded(Self.mutation(value)) } == expected, "\(value), encoded")
        }
        #expect(try PushRequestCodec.decode(Self.mutation("\"\(Self.trip)\"")).first?.space == SpaceSamples.trip)
    }

    @Test("a row's or a read's space that is not a lowercase UUID is refused at its path")
    func rowAndReadSpace() {
        let row = #"{"kind":"pin","id":"p1","fields":{},"updatedAt":1,"deletedAt":null,"space":"\#(Self.upper)"}"#
        #expect(wireError { try ReadReplyCodec.decode(bytes(#"{"row":\#(row)}"#)) }
                == .invalidValue(path: "$.row.space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)"))
        #expect(wireError { try ReadRequestCodec.decode(bytes(#"{"kind":"pin","id":"p1","space":null}"#)) }
                == .wrongType(path: "$.space", expected: "a string"))
        #expect(wireError { try ReadRequestCodec.decode(bytes(#"{"kind":"pin","id":"p1","space":"\#(Self.upper)"}"#)) }
                == .invalidValue(path: "$.space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)"))
    }

    @Test("a pull's spaces: an uppercase id, a cursor of a kind the pull does not name, a bad cursor, a missing or unknown member, too many spaces")
    func pullSpaces() {
        let path = #"$.spaces["\#(Self.trip)"]"#
        let cases: [(String, WireError)] = [
            (#"[]"#, .wrongType(path: "$.spaces", expected: "an object of spaces")),
            (#"{"\#(Self.upper)":{"version":null,"cursors":{}}}"#,
             .invalidValue(path: #"$.spaces["\#(Self.upper)"]"#, reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (#"{"\#(Self.trip)":{"version":null,"cursors":{"note":null}}}"#,
             .invalidValue(path: path + ".cursors.note", reason: "a kind the request's cursors do not name (every space is pulled in the same kinds)")),
            (#"{"\#(Self.trip)":{"version":null,"cursors":{"pin":"abc"}}}"#, .badCursor(path: path + ".cursors.pin", text: "abc")),
            (#"{"\#(Self.trip)":{"version":null,"cursors":{"pin":5}}}"#, .wrongType(path: path + ".cursors.pin", expected: "a cursor string or null")),
            (#"{"\#(Self.trip)":{"cursors":{}}}"#, .missingMember(path: path + ".version")),
            (#"{"\#(Self.trip)":{"version":null}}"#, .missingMember(path: path + ".cursors")),
            (#"{"\#(Self.trip)":{"version":"1","cursors":{}}}"#, .wrongType(path: path + ".version", expected: "an integer or null")),
            (#"{"\#(Self.trip)":{"version":1,"cursors":{},"name":"x"}}"#, .unknownMember(path: path + ".name")),
            (#"{"\#(Self.trip)":null}"#, .wrongType(path: path, expected: "an object")),
        ]
        for (spaces, expected) in cases {
            #expect(wireError { try PullRequestCodec.decode(Self.pull(spaces)) } == expected, "\(spaces)")
            let wait = bytes(#"{"cursors":{"pin":null},"timeoutMs":5,"spaces":\#(spaces)}"#)
            #expect(wireError { try ChangeWaitRequestCodec.decode(wait) } == expected, "\(spaces), wait")
        }
        let many = (0...1_000).map { index in
            #""\#(String(format: "%08x", index))-0000-4000-8000-000000000000":{"version":null,"cursors":{}}"#
        }.joined(separator: ",")
        #expect(wireError { try PullRequestCodec.decode(Self.pull("{\(many)}")) }
                == .invalidValue(path: "$.spaces", reason: "1001 spaces, at most 1000"))
    }

    @Test("a pull reply: space members in reply to a pull that named none, a shared row without them, and malformed space members")
    func pullReplies() {
        let plain = #""rows":[],"nextCursors":{},"hasMore":false"#
        let spaced = plain + #","nextSpaceCursors":{},"spaces":[],"lostSpaces":[]"#
        #expect(wireError { try PullPageCodec.decode(bytes("{\(spaced)}")) } == .unknownMember(path: "$.lostSpaces"))
        #expect(wireError { try PullPageCodec.decode(bytes("{\(plain)}"), namingSpaces: true) } == .missingMember(path: "$.nextSpaceCursors"))
        let sharedRow = #"{"rows":[{"kind":"pin","id":"p1","fields":{},"updatedAt":1,"deletedAt":null,"space":"\#(Self.trip)"}],"nextCursors":{},"hasMore":false}"#
        #expect(wireError { try PullPageCodec.decode(bytes(sharedRow)) } == .unknownMember(path: "$.rows[0].space"))
        let cases: [(String, WireError)] = [
            (#""nextSpaceCursors":{"\#(Self.upper)":{}},"spaces":[],"lostSpaces":[]"#,
             .invalidValue(path: #"$.nextSpaceCursors["\#(Self.upper)"]"#, reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (#""nextSpaceCursors":{"\#(Self.trip)":{"pin":"x"}},"spaces":[],"lostSpaces":[]"#,
             .badCursor(path: #"$.nextSpaceCursors["\#(Self.trip)"].pin"#, text: "x")),
            (#""nextSpaceCursors":{},"spaces":[],"lostSpaces":[7]"#, .wrongType(path: "$.lostSpaces[0]", expected: "a space id")),
            (#""nextSpaceCursors":{},"spaces":[],"lostSpaces":["\#(Self.upper)"]"#,
             .invalidValue(path: "$.lostSpaces[0]", reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (#""nextSpaceCursors":{},"spaces":{},"lostSpaces":[]"#, .wrongType(path: "$.spaces", expected: "an array")),
            (#""nextSpaceCursors":{},"spaces":[{"space":"\#(Self.trip)",\#(Self.goodSpace.replacingOccurrences(of: "\"owner\",\"members", with: "\"admin\",\"members"))}],"lostSpaces":[]"#,
             .invalidValue(path: "$.spaces[0].role", reason: "\"admin\" is not owner, editor or viewer")),
        ]
        for (members, expected) in cases {
            #expect(wireError { try PullPageCodec.decode(bytes("{\(plain),\(members)}"), namingSpaces: true) } == expected, "\(members)")
        }
    }

    @Test("a SPACE value: an uppercase id, a role or member role not in the set, members out of order or twice, bad names and users, a missing version")
    func spaceValues() throws {
        #expect(try SpaceChangeReplyCodec.decode(Self.space(Self.goodSpace), at: .createSpace)?.members.count == 2)
        let cases: [(String, WireError)] = [
            (Self.goodSpace.replacingOccurrences(of: #""role":"owner","members"#, with: #""role":"Owner","members"#),
             .invalidValue(path: "$.space.role", reason: "\"Owner\" is not owner, editor or viewer")),
            (Self.goodSpace.replacingOccurrences(of: #""role":"viewer""#, with: #""role":"admin""#),
             .invalidValue(path: "$.space.members[1].role", reason: "\"admin\" is not owner, editor or viewer")),
            (Self.goodSpace.replacingOccurrences(of: #""user":"kid""#, with: #""user":"ann""#),
             .invalidValue(path: "$.space.members[1].user", reason: "members are not in the order of their user names' bytes")),
            (Self.goodSpace.replacingOccurrences(of: #""user":"kid""#, with: #""user":"dad""#),
             .invalidValue(path: "$.space.members[1].user", reason: "\"dad\" is a member twice")),
            (Self.goodSpace.replacingOccurrences(of: #""user":"kid""#, with: #""user":"""#), .invalidValue(path: "$.space.members[1].user", reason: "empty")),
            (Self.goodSpace.replacingOccurrences(of: #""user":"kid""#, with: #""user":"k\u0000""#),
             .invalidValue(path: "$.space.members[1].user", reason: "a user name holds U+0000")),
            (Self.goodSpace.replacingOccurrences(of: #"{"role":"viewer","user":"kid"}"#, with: #"{"role":"viewer","user":"kid","since":1}"#),
             .unknownMember(path: "$.space.members[1].since")),
            (Self.goodSpace.replacingOccurrences(of: #""name":"Trip""#, with: #""name":"""#), .invalidValue(path: "$.space.name", reason: "empty")),
            (Self.goodSpace.replacingOccurrences(of: #""name":"Trip""#, with: #""name":"T\u0000""#),
             .invalidValue(path: "$.space.name", reason: "a space name holds U+0000")),
            (Self.goodSpace.replacingOccurrences(of: #""name":"Trip""#, with: #""name":"\#(String(repeating: "n", count: 129))""#),
             .invalidValue(path: "$.space.name", reason: "129 UTF-8 bytes, at most 128")),
            (Self.goodSpace.replacingOccurrences(of: #","version":3"#, with: ""), .missingMember(path: "$.space.version")),
        ]
        for (members, expected) in cases {
            #expect(wireError { try SpaceChangeReplyCodec.decode(Self.space(members), at: .createSpace) } == expected, "\(members)")
        }
        #expect(wireError { try SpaceChangeReplyCodec.decode(bytes(#"{"space":{"space":"\#(Self.upper)",\#(Self.goodSpace)}}"#), at: .renameSpace) }
                == .invalidValue(path: "$.space.space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)"))
        #expect(wireError { try SpaceChangeReplyCodec.decode(Self.space(Self.goodSpace), at: .leaveSpace) } == .unknownMember(path: "$.space"))
        #expect(wireError { try SpaceChangeReplyCodec.decode(bytes("{}"), at: .setSpaceMember) } == .missingMember(path: "$.space"))
    }

    @Test("a space list out of id order or naming a space twice is refused")
    func spaceLists() throws {
        let trip = #"{"space":"\#(Self.trip)",\#(Self.goodSpace)}"#
        let gym = #"{"space":"\#(SpaceSamples.gymText)",\#(Self.goodSpace)}"#
        #expect(try SpaceListReplyCodec.decode(bytes(#"{"spaces":[\#(trip),\#(gym)]}"#)).count == 2)
        #expect(wireError { try SpaceListReplyCodec.decode(bytes(#"{"spaces":[\#(gym),\#(trip)]}"#)) }
                == .invalidValue(path: "$.spaces[1].space", reason: "spaces are not in the order of their ids' bytes"))
        #expect(wireError { try SpaceListReplyCodec.decode(bytes(#"{"spaces":[\#(trip),\#(trip)]}"#)) }
                == .invalidValue(path: "$.spaces[1].space", reason: "space \(Self.trip) is listed twice"))
        #expect(wireError { try SpaceListReplyCodec.decode(bytes("{}")) } == .missingMember(path: "$.spaces"))
    }

    @Test("membership requests: a role not in the set, an uppercase or missing id, a name or user out of range, an unknown member, a list body with a member")
    func membershipRequests() {
        let cases: [(SyncEndpoint, String, WireError)] = [
            (.setSpaceMember, #"{"space":"\#(Self.trip)","user":"kid","role":"admin"}"#, .invalidValue(path: "$.role", reason: "\"admin\" is not owner, editor or viewer")),
            (.setSpaceMember, #"{"space":"\#(Self.trip)","user":"kid"}"#, .missingMember(path: "$.role")),
            (.setSpaceMember, #"{"space":"\#(Self.trip)","user":"\#(String(repeating: "u", count: 129))","role":"owner"}"#,
             .invalidValue(path: "$.user", reason: "129 UTF-8 bytes, at most 128")),
            (.createSpace, #"{"space":"\#(Self.upper)","name":"Trip"}"#, .invalidValue(path: "$.space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (.createSpace, #"{"name":"Trip"}"#, .missingMember(path: "$.space")),
            (.createSpace, #"{"space":"\#(Self.trip)","name":""}"#, .invalidValue(path: "$.name", reason: "empty")),
            (.renameSpace, #"{"space":"\#(Self.trip)","name":7}"#, .wrongType(path: "$.name", expected: "a string")),
            (.removeSpaceMember, #"{"space":"\#(Self.trip)","user":""}"#, .invalidValue(path: "$.user", reason: "empty")),
            (.leaveSpace, #"{"space":"\#(Self.trip)","user":"kid"}"#, .unknownMember(path: "$.user")),
            (.deleteSpace, #"{"space":null}"#, .wrongType(path: "$.space", expected: "a string")),
            (.listSpaces, #"{"all":true}"#, .unknownMember(path: "$.all")),
            (.listSpaces, #"[]"#, .wrongType(path: "$", expected: "an object")),
        ]
        for (endpoint, body, expected) in cases {
            #expect(wireError { try SpaceChangeCodec.decode(bytes(body), at: endpoint) } == expected, "\(endpoint): \(body)")
        }
    }

    @Test("an error body's space, role, user and spaceKinds are checked as strictly as the rest")
    func errorBodies() {
        let cases: [(String, WireError)] = [
            (#""role":"admin""#, .invalidValue(path: "$.role", reason: "\"admin\" is not owner, editor or viewer")),
            (#""space":"\#(Self.upper)""#, .invalidValue(path: "$.space", reason: "\"\(Self.upper)\" \(Self.notSpaceID)")),
            (#""user":"""#, .invalidValue(path: "$.user", reason: "empty")),
            (#""spaceKinds":{"\#(Self.trip)":[""]}"#, .wrongType(path: #"$.spaceKinds["\#(Self.trip)"][0]"#, expected: "a non-empty kind")),
            (#""spaceKinds":{"\#(Self.trip)":"pin"}"#, .wrongType(path: #"$.spaceKinds["\#(Self.trip)"]"#, expected: "an array")),
            (#""spaceKinds":{"x":[]}"#, .invalidValue(path: "$.spaceKinds.x", reason: "\"x\" \(Self.notSpaceID)")),
            (#""spaceKinds":[]"#, .wrongType(path: "$.spaceKinds", expected: "an object")),
        ]
        for (member, expected) in cases {
            #expect(wireError { try ErrorBodyCodec.decode(bytes(#"{"error":"e","message":"m",\#(member)}"#)) } == expected, "\(member)")
        }
    }
}
