import SyncJournalProtocol
import SyncJournalWire
import Testing

/// Shared values for the space codec tests.
enum SpaceSamples {
    static let tripText = "2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b"
    static let trip = SpaceID(tripText)!
    static let gymText = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
    static let gym = SpaceID(gymText)!
    static let space = Space(id: trip, name: "Weekend pins", role: .editor,
                             members: [SpaceMember(user: "dad", role: .owner), SpaceMember(user: "kid", role: .editor)],
                             version: 1_764_000_000_300)
    static let held: [SpaceID: SpaceCursors] = [
        trip: SpaceCursors(version: 1_764_000_000_300, cursors: ["pin": PullCursor(updatedAt: 1_764_000_000_250, id: "p7"), "note": nil]),
        gym: SpaceCursors(version: nil, cursors: [:]),
    ]
}

@Suite("Spaces on the wire: every message round-trips")
struct SpaceWireTests {
    @Test("a mutation's space round-trips through the value reader and the byte reader, and a personal one is sent as before spaces")
    func mutationSpace() throws {
        var shared = sampleMutations
        shared[1].space = SpaceSamples.trip
        let body = PushRequestCodec.encode(shared)
        #expect(String(decoding: body, as: UTF8.self).contains(#""space":"\#(SpaceSamples.tripText)""#))
        #expect(try PushRequestCodec.decode(body) == shared)
        #expect(try PushRequestCodec.decodeEncoded(body).map(\.mutation.space) == [.personal, SpaceSamples.trip, .personal])
        #expect(!String(decoding: PushRequestCodec.encode(sampleMutations), as: UTF8.self).contains("space"))
    }

    @Test("a row's space round-trips in pull, read and push replies, and the value, byte and encoded writers give the same bytes")
    func rowSpace() throws {
        let row = ServerRow(kind: "pin", id: "p9", fields: ["title": .string("Tapas")], updatedAt: 1_764_000_000_400, modelVersion: 2,
                            space: SpaceSamples.trip)
        #expect(try ServerRowCodec.decode(ServerRowCodec.encode(row), at: "$.row") == row)
        #expect(try ReadReplyCodec.decode(ReadReplyCodec.encode(row)) == row)
        #expect(ReadReplyCodec.encode(row) == JSONValue.object(["row": ServerRowCodec.encode(row)]).encoded())
        let results = [MutationResult(operationID: operationID(1), outcome: .applied(row)),
                       MutationResult(operationID: operationID(2), outcome: .conflict(server: row))]
        let reply = PushReplyCodec.encode(results)
        #expect(try PushReplyCodec.decode(reply) == results)
        let mutation = Mutation(operationID: operationID(1), kind: "pin", op: .create, recordID: "p9", fields: row.fields, baseUpdatedAt: nil)
        let fields = try #require(try PushRequestCodec.decodeEncoded(PushRequestCodec.encode([mutation])).first).fields
        let encodedRow = EncodedRow(kind: "pin", id: "p9", fields: fields, updatedAt: row.updatedAt, modelVersion: 2, space: SpaceSamples.trip)
        #expect(encodedRow.decoded == row)
        let encoded = [EncodedMutationResult(operationID: operationID(1), outcome: .applied(encodedRow)),
                       EncodedMutationResult(operationID: operationID(2), outcome: .conflict(server: encodedRow))]
        #expect(PushReplyCodec.encode(encoded: encoded) == reply)
        #expect(!String(decoding: ReadReplyCodec.encode(sampleRow), as: UTF8.self).contains("space"), "a personal row has no space")
    }

    @Test("a read request's space round-trips, and a personal read is the body of before spaces")
    func readSpace() throws {
        let shared = ReadRequest(kind: "pin", id: "p1", space: SpaceSamples.trip)
        #expect(String(decoding: ReadRequestCodec.encode(shared), as: UTF8.self) == #"{"id":"p1","kind":"pin","space":"\#(SpaceSamples.tripText)"}"#)
        #expect(try ReadRequestCodec.decode(ReadRequestCodec.encode(shared)) == shared)
        #expect(String(decoding: ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1")), as: UTF8.self) == #"{"id":"p1","kind":"pin"}"#)
    }

    @Test("a pull's spaces round-trip with null versions and cursors, {} names none, and a pull without spaces is the body of before")
    func pullRequestSpaces() throws {
        let request = PullRequest(cursors: ["pin": PullCursor(updatedAt: 1_764_000_000_123, id: "p1"), "note": nil], limit: 500,
                                  spaces: SpaceSamples.held)
        let body = PullRequestCodec.encode(request)
        #expect(String(decoding: body, as: UTF8.self) == #"{"cursors":{"note":null,"pin":"1764000000123:p1"},"limit":500,"resync":false,"spaces":{"#
                + #""2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b":{"cursors":{"note":null,"pin":"1764000000250:p7"},"version":1764000000300},"#
                + #""9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d":{"cursors":{},"version":null}}}"#)
        #expect(try PullRequestCodec.decode(body) == request)
        let every = PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:])
        #expect(try PullRequestCodec.decode(PullRequestCodec.encode(every)) == every)
        #expect(!String(decoding: PullRequestCodec.encode(sampleRequest), as: UTF8.self).contains("spaces"))
        #expect(try PullRequestCodec.decode(PullRequestCodec.encode(sampleRequest)).spaces == nil)
    }

    @Test("a pull reply's space cursors, descriptions and lost spaces round-trip for a pull naming spaces, and are left out otherwise")
    func pullPageSpaces() throws {
        let row = ServerRow(kind: "pin", id: "p9", fields: ["title": .string("Tapas")], updatedAt: 1_764_000_000_400, space: SpaceSamples.trip)
        let page = PullPage(rows: [sampleRow, row], nextCursors: ["pin": PullCursor(updatedAt: 1_764_000_000_200, id: "p1")], hasMore: false,
                            nextSpaceCursors: [SpaceSamples.trip: ["pin": PullCursor(updatedAt: 1_764_000_000_400, id: "p9")]],
                            spaces: [SpaceSamples.space], lostSpaces: [SpaceSamples.gym])
        let body = PullPageCodec.encode(page, includingSpaces: true)
        #expect(try PullPageCodec.decode(body, namingSpaces: true) == page)
        let reference = JSONValue.object([
            "rows": .array(page.rows.map { ServerRowCodec.encode($0) }),
            "nextCursors": .object(["pin": .string("1764000000200:p1")]),
            "nextSpaceCursors": .object([SpaceSamples.tripText: .object(["pin": .string("1764000000400:p9")])]),
            "spaces": .array([SpaceCodec.encode(SpaceSamples.space)]),
            "lostSpaces": .array([.string(SpaceSamples.gymText)]),
            "hasMore": .bool(false),
        ])
        #expect(body == reference.encoded(), "written straight to bytes, the bytes of the JSON value")
        var personal = page
        personal.rows = [sampleRow]
        personal.nextSpaceCursors = [:]
        personal.spaces = []
        personal.lostSpaces = []
        let plain = PullPageCodec.encode(personal)
        #expect(!String(decoding: plain, as: UTF8.self).contains("pace"))
        #expect(try PullPageCodec.decode(plain) == personal)
        #expect(try PullPageCodec.decode(PullPageCodec.encode(personal, includingSpaces: true), namingSpaces: true) == personal)
    }

    @Test("a SPACE value round-trips, its members written in the order of their user names' bytes")
    func spaceValue() throws {
        var unordered = SpaceSamples.space
        unordered.members.reverse()
        let json = SpaceCodec.encode(unordered)
        #expect(json.encodedText == #"{"members":[{"role":"owner","user":"dad"},{"role":"editor","user":"kid"}],"name":"Weekend pins","#
                + #""role":"editor","space":"2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b","version":1764000000300}"#)
        #expect(try SpaceCodec.decode(json, at: "$.space") == SpaceSamples.space)
    }

    @Test("a change wait's spaces round-trip, and a wait without spaces is the body of before")
    func changeWaitSpaces() throws {
        let request = ChangeWaitRequest(cursors: ["pin": nil, "note": PullCursor(updatedAt: 4, id: "n")], timeoutMilliseconds: 30_000,
                                        spaces: SpaceSamples.held)
        #expect(try ChangeWaitRequestCodec.decode(ChangeWaitRequestCodec.encode(request)) == request)
        let plain = ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 5)
        #expect(String(decoding: ChangeWaitRequestCodec.encode(plain), as: UTF8.self) == #"{"cursors":{"pin":null},"timeoutMs":5}"#)
    }

    @Test("every membership request round-trips through its own codec and SpaceChangeCodec, posted to its path")
    func membershipRequests() throws {
        let trip = SpaceSamples.trip
        let expected: [(SpaceChange, SyncEndpoint, String)] = [
            (.create(trip, name: "Weekend pins"), .createSpace, #"{"name":"Weekend pins","space":"\#(SpaceSamples.tripText)"}"#),
            (.rename(trip, name: "Summer"), .renameSpace, #"{"name":"Summer","space":"\#(SpaceSamples.tripText)"}"#),
            (.setMember(trip, user: "kid", role: .viewer), .setSpaceMember, #"{"role":"viewer","space":"\#(SpaceSamples.tripText)","user":"kid"}"#),
            (.removeMember(trip, user: "kid"), .removeSpaceMember, #"{"space":"\#(SpaceSamples.tripText)","user":"kid"}"#),
            (.leave(trip), .leaveSpace, #"{"space":"\#(SpaceSamples.tripText)"}"#),
            (.delete(trip), .deleteSpace, #"{"space":"\#(SpaceSamples.tripText)"}"#),
        ]
        for (change, endpoint, text) in expected {
            #expect(SyncEndpoint(change) == endpoint)
            let body = SpaceChangeCodec.encode(change)
            #expect(String(decoding: body, as: UTF8.self) == text)
            #expect(try SpaceChangeCodec.decode(body, at: endpoint) == change)
        }
        #expect(try CreateSpaceRequestCodec.decode(CreateSpaceRequestCodec.encode(space: trip, name: "n")) == .create(trip, name: "n"))
        #expect(try RenameSpaceRequestCodec.decode(RenameSpaceRequestCodec.encode(space: trip, name: "n")) == .rename(trip, name: "n"))
        #expect(try SetSpaceMemberRequestCodec.decode(SetSpaceMemberRequestCodec.encode(space: trip, user: "u", role: .owner))
                == .setMember(trip, user: "u", role: .owner))
        #expect(try RemoveSpaceMemberRequestCodec.decode(RemoveSpaceMemberRequestCodec.encode(space: trip, user: "u")) == .removeMember(trip, user: "u"))
        #expect(try LeaveSpaceRequestCodec.decode(LeaveSpaceRequestCodec.encode(space: trip)) == .leave(trip))
        #expect(try DeleteSpaceRequestCodec.decode(DeleteSpaceRequestCodec.encode(space: trip)) == .delete(trip))
        #expect(ListSpacesRequestCodec.encode() == bytes("{}"))
        #expect(try SpaceChangeCodec.decode(ListSpacesRequestCodec.encode(), at: .listSpaces) == nil)
        let membership = SyncEndpoint.allCases.filter(\.isMembership)
        #expect(membership.map(\.path) == ["/v1/spaces/create", "/v1/spaces/rename", "/v1/spaces/members/set",
                                            "/v1/spaces/members/remove", "/v1/spaces/leave", "/v1/spaces/delete", "/v1/spaces/list"])
        #expect(membership.allSatisfy { $0.method == "POST" })
        #expect(SyncEndpoint.allCases.filter { !$0.isMembership && !$0.isAttachment }.map(\.path)
                == ["/v1/sync/push", "/v1/sync/pull", "/v1/sync/read", "/v1/sync/wait", "/v1/health"])
        #expect(SyncEndpoint.allCases.filter(\.isAttachment).map(\.path)
                == ["/v1/attachments/status", "/v1/attachments/upload", "/v1/attachments/download"])
    }

    @Test("membership replies: the space after a change, {} after a leave or delete, the list in id order")
    func membershipReplies() throws {
        let reply = SpaceChangeReplyCodec.encode(SpaceSamples.space)
        for endpoint in [SyncEndpoint.createSpace, .renameSpace, .setSpaceMember, .removeSpaceMember] {
            #expect(try SpaceChangeReplyCodec.decode(reply, at: endpoint) == SpaceSamples.space)
        }
        #expect(SpaceChangeReplyCodec.encode(nil) == bytes("{}"))
        #expect(try SpaceChangeReplyCodec.decode(bytes("{}"), at: .leaveSpace) == nil)
        #expect(try SpaceChangeReplyCodec.decode(bytes("{}"), at: .deleteSpace) == nil)
        let gym = Space(id: SpaceSamples.gym, name: "Gym", role: .owner, members: [SpaceMember(user: "dad", role: .owner)], version: 7)
        let list = SpaceListReplyCodec.encode([gym, SpaceSamples.space])
        #expect(try SpaceListReplyCodec.decode(list) == [SpaceSamples.space, gym])
        #expect(try SpaceListReplyCodec.decode(SpaceListReplyCodec.encode([])) == [])
    }

    @Test("each refusal's error body reads back as the same refusal, with the protocol's status and code")
    func refusalBodies() throws {
        let refusals: [(SpaceRefusal, Int, ProtocolErrorCode)] = [
            (.noSuchSpace(SpaceSamples.trip), 404, .noSuchSpace),
            (.forbidden(SpaceSamples.trip, role: .viewer), 403, .forbidden),
            (.spaceExists(SpaceSamples.trip), 409, .spaceExists),
            (.lastOwner(SpaceSamples.trip), 409, .lastOwner),
            (.unknownUser("grandma"), 404, .unknownUser),
            (.tooMany(reason: "kid is a member of 1000 spaces, at most 1000"), 409, .tooMany),
        ]
        for (refusal, status, code) in refusals {
            #expect(refusal.httpStatus == status)
            #expect(refusal.errorCode == code)
            let body = try ErrorBodyCodec.decode(ErrorBodyCodec.encode(ErrorBody(refusal: refusal)))
            #expect(body.code == code)
            #expect(body.refusal == refusal)
        }
        #expect(["no_such_space", "forbidden", "space_exists", "last_owner", "too_many", "unknown_user"]
                == [ProtocolErrorCode.noSuchSpace, .forbidden, .spaceExists, .lastOwner, .tooMany, .unknownUser].map(\.rawValue))
        #expect(try ErrorBodyCodec.decode(bytes(#"{"error":"no_such_space","message":"m"}"#)).refusal == nil, "no space: a malformed refusal")
        #expect(try ErrorBodyCodec.decode(bytes(#"{"error":"forbidden","message":"m","space":"\#(SpaceSamples.tripText)"}"#)).refusal == nil)
        #expect(ErrorBody(code: .badRequest, message: "m").refusal == nil)
    }

    @Test("a cursor_expired body's spaceKinds round-trip beside its kinds")
    func spaceKinds() throws {
        let body = ErrorBody(code: .cursorExpired, message: "resync", kinds: ["pin"],
                             spaceKinds: [SpaceSamples.trip: ["note", "pin"], SpaceSamples.gym: []])
        let text = String(decoding: ErrorBodyCodec.encode(body), as: UTF8.self)
        #expect(text == #"{"error":"cursor_expired","kinds":["pin"],"message":"resync","spaceKinds":{"#
                + #""2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b":["note","pin"],"9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d":[]}}"#)
        #expect(try ErrorBodyCodec.decode(bytes(text)) == body)
    }

    @Test("Sync-Row-Members names members comma-separated, and reads them back from any spacing and repeated headers")
    func rowMembersHeader() {
        #expect(RowMembersHeader.name == "Sync-Row-Members")
        #expect(RowMembersHeader.value(naming: [RowMembersHeader.modelVersion, RowMembersHeader.space]) == "modelVersion, space")
        #expect(RowMembersHeader.members(in: ["modelVersion ,\tspace", "", "x,,"]) == ["modelVersion", "space", "x"])
        #expect(RowMembersHeader.members(in: []) == [])
    }
}
