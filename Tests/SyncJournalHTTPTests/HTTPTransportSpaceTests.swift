import Foundation
import SyncJournalHTTP
import SyncJournalProtocol
import SyncJournalWire
import Testing

/// HTTPTransport and shared spaces: the requests it sends, the replies and
/// refusals it reads, and servers from before spaces.
@Suite("HTTP transport: shared spaces")
struct HTTPTransportSpaceTests {
    static let tripText = "2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b"
    static let trip = SpaceID(tripText)!
    static let gym = SpaceID("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")!
    static let space = Space(id: trip, name: "Weekend pins", role: .owner,
                             members: [SpaceMember(user: "dad", role: .owner), SpaceMember(user: "kid", role: .editor)], version: 300)
    static let held: [SpaceID: SpaceCursors] = [trip: SpaceCursors(version: 300, cursors: ["pin": PullCursor(updatedAt: 250, id: "p7")])]
    static let spacedPull = PullRequest(cursors: ["pin": PullCursor(updatedAt: 123, id: "p1")], limit: 500, spaces: held)
    static let sharedRow = ServerRow(kind: "pin", id: "p9", fields: ["title": .string("Tapas")], updatedAt: 400, space: trip)

    /// The mutations of ``HTTPTransportTests/mutations``, the first moved into the trip space.
    static var mutations: [Mutation] {
        var mutations = HTTPTransportTests.mutations
        mutations[0].space = trip
        return mutations
    }

    static func error(_ status: Int, _ body: ErrorBody) -> ScriptedHTTPResponder.Reply {
        .respond(status: status, headers: [("Content-Type", "application/json")], body: ErrorBodyCodec.encode(body))
    }

    /// A server from before spaces refusing `path` as an unknown member.
    static func unknownMember(_ path: String) -> ScriptedHTTPResponder.Reply {
        error(400, ErrorBody(WireError.unknownMember(path: path)))
    }

    static func rowMembers(_ request: ScriptedHTTPResponder.Request) -> Set<String> {
        RowMembersHeader.members(in: request.headers.filter { $0.name == "sync-row-members" }.map(\.value))
    }

    // MARK: Requests

    @Test("a push into a shared space sends each mutation's space and says it reads rows' space; a personal push names modelVersion alone")
    func pushSendsSpace() async throws {
        let appliedShared = MutationResult(operationID: Self.mutations[0].operationID, outcome: .applied(Self.sharedRow))
        let results = [appliedShared, HTTPTransportTests.results[1]]
        let responder = try ScriptedHTTPResponder([.ok(PushReplyCodec.encode(results)), .ok(PushReplyCodec.encode(HTTPTransportTests.results))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.push(Self.mutations) == results)
        #expect(try await transport.push(HTTPTransportTests.mutations) == HTTPTransportTests.results)
        let sent = responder.requests
        #expect(try PushRequestCodec.decode(sent[0].body) == Self.mutations)
        #expect(sent[0].header("Sync-Row-Members") == "modelVersion, space")
        #expect(String(decoding: sent[0].body, as: UTF8.self).contains(#""space":"\#(Self.tripText)""#))
        #expect(sent[1].header("Sync-Row-Members") == "modelVersion")
        #expect(!String(decoding: sent[1].body, as: UTF8.self).contains("space"))
    }

    @Test("a read of a shared record posts kind, id and space with the header and returns the row; a personal key reads as before")
    func readSendsSpace() async throws {
        let responder = try ScriptedHTTPResponder([.ok(ReadReplyCodec.encode(Self.sharedRow)), .ok(ReadReplyCodec.encode(nil))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.read(RecordKey(kind: "pin", id: "p9", space: Self.trip)) == Self.sharedRow)
        #expect(try await transport.read(RecordKey(kind: "pin", id: "p1")) == nil)
        let sent = responder.requests
        #expect(sent.map(\.path) == ["/v1/sync/read", "/v1/sync/read"])
        #expect(String(decoding: sent[0].body, as: UTF8.self) == #"{"id":"p9","kind":"pin","space":"\#(Self.tripText)"}"#)
        #expect(Self.rowMembers(sent[0]) == ["modelVersion", "space"])
        #expect(String(decoding: sent[1].body, as: UTF8.self) == #"{"id":"p1","kind":"pin"}"#)
        #expect(Self.rowMembers(sent[1]) == ["modelVersion"])
    }

    @Test("a pull naming spaces sends them with the header and returns the page's space cursors, descriptions and lost spaces")
    func pullSendsSpaces() async throws {
        let page = PullPage(rows: [HTTPTransportTests.row, Self.sharedRow], nextCursors: ["pin": PullCursor(updatedAt: 200, id: "p1")],
                            hasMore: false, nextSpaceCursors: [Self.trip: ["pin": PullCursor(updatedAt: 400, id: "p9")]],
                            spaces: [Self.space], lostSpaces: [Self.gym])
        let responder = try ScriptedHTTPResponder([.ok(PullPageCodec.encode(page, includingSpaces: true))])
        defer { responder.stop() }
        #expect(try await HTTPTransportTests.transport(responder).pull(Self.spacedPull) == page)
        let request = try #require(responder.requests.first)
        #expect(try PullRequestCodec.decode(request.body) == Self.spacedPull)
        #expect(request.header("Sync-Row-Members") == "modelVersion, space")
    }

    @Test("a reply to a pull naming spaces that lacks the space members, or one to a personal pull holding them, is a malformed reply")
    func pullReplyShape() async throws {
        let plain = PullPage(rows: [], nextCursors: [:], hasMore: false)
        let responder = try ScriptedHTTPResponder([.ok(PullPageCodec.encode(plain)), .ok(PullPageCodec.encode(plain, includingSpaces: true))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let missing = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.pull(Self.spacedPull) }
        #expect(missing == .transient(reason: "malformed reply to /v1/sync/pull: $.nextSpaceCursors is missing", retryAfter: nil))
        let extra = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.pull(HTTPTransportTests.pullRequest) }
        #expect(extra == .transient(reason: "malformed reply to /v1/sync/pull: $.lostSpaces is not a member of this message", retryAfter: nil))
    }

    @Test("a wait naming spaces sends them with the header")
    func waitSendsSpaces() async throws {
        let responder = try ScriptedHTTPResponder([.ok(ChangeWaitReplyCodec.encode(changed: true))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.waitForChanges(after: ["pin": nil], spaces: Self.held, timeout: .seconds(2)) == .changed)
        let request = try #require(responder.requests.first)
        #expect(try ChangeWaitRequestCodec.decode(request.body) == ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 2_000, spaces: Self.held))
        #expect(request.header("Sync-Row-Members") == "modelVersion, space")
    }

    @Test("each membership change posts its body to its path with the token and header, and returns the space after it (nil after leave and delete)")
    func membershipChanges() async throws {
        let changes: [SpaceChange] = [.create(Self.trip, name: "Weekend pins"), .rename(Self.trip, name: "Summer"),
                                      .setMember(Self.trip, user: "kid", role: .viewer), .removeMember(Self.trip, user: "kid"),
                                      .leave(Self.trip), .delete(Self.trip)]
        let described = ScriptedHTTPResponder.Reply.ok(SpaceChangeReplyCodec.encode(Self.space))
        let empty = ScriptedHTTPResponder.Reply.ok(SpaceChangeReplyCodec.encode(nil))
        let responder = try ScriptedHTTPResponder([described, described, described, described, empty, empty])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        var answers: [Space?] = []
        for change in changes { answers.append(try await transport.change(change)) }
        #expect(answers == [Self.space, Self.space, Self.space, Self.space, nil, nil])
        let sent = responder.requests
        #expect(sent.map(\.path) == ["/v1/spaces/create", "/v1/spaces/rename", "/v1/spaces/members/set", "/v1/spaces/members/remove",
                                     "/v1/spaces/leave", "/v1/spaces/delete"])
        for (request, change) in zip(sent, changes) {
            #expect(request.method == "POST")
            #expect(request.header("Authorization") == "Bearer \(HTTPTransportTests.token)")
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("Sync-Row-Members") == "modelVersion, space")
            #expect(request.body == SpaceChangeCodec.encode(change))
            #expect(try SpaceChangeCodec.decode(request.body, at: SyncEndpoint(change)) == change)
        }
        #expect(String(decoding: sent[2].body, as: UTF8.self) == #"{"role":"viewer","space":"\#(Self.tripText)","user":"kid"}"#)
    }

    @Test("spaces() posts {} to /v1/spaces/list and returns the spaces in id order")
    func listSpaces() async throws {
        let gym = Space(id: Self.gym, name: "Gym", role: .viewer, members: [SpaceMember(user: "coach", role: .owner)], version: 9)
        let responder = try ScriptedHTTPResponder([.ok(SpaceListReplyCodec.encode([gym, Self.space]))])
        defer { responder.stop() }
        #expect(try await HTTPTransportTests.transport(responder).spaces() == [Self.space, gym])
        let request = try #require(responder.requests.first)
        #expect(request.method == "POST" && request.path == "/v1/spaces/list")
        #expect(request.body == Array("{}".utf8))
    }

    @Test("a change answered with another space's description, or a malformed body, is a transient malformed reply")
    func malformedChangeReplies() async throws {
        var other = Self.space
        other.id = Self.gym
        let responder = try ScriptedHTTPResponder([.ok(SpaceChangeReplyCodec.encode(other)), .ok(Array("{}".utf8)),
                                                   .ok(Array(#"{"spaces":{}}"#.utf8))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let wrongSpace = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.rename(Self.trip, name: "x")) }
        #expect(wrongSpace == .transient(reason: "malformed reply to /v1/spaces/rename: it describes space \(Self.gym), not \(Self.trip)",
                                         retryAfter: nil))
        let noSpace = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.create(Self.trip, name: "x")) }
        #expect(noSpace == .transient(reason: "malformed reply to /v1/spaces/create: $.space is missing", retryAfter: nil))
        let badList = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.spaces() }
        #expect(badList == .transient(reason: "malformed reply to /v1/spaces/list: $.spaces is not an array", retryAfter: nil))
    }

    // MARK: Errors

    @Test("each refusal (404 no_such_space, 403 forbidden, 409 space_exists, last_owner, too_many, 404 unknown_user) is spaceRefused")
    func refusals() async throws {
        let refusals: [SpaceRefusal] = [.noSuchSpace(Self.trip), .forbidden(Self.trip, role: .editor), .spaceExists(Self.trip),
                                        .lastOwner(Self.trip), .tooMany(reason: "space has 1000 members, at most 1000"), .unknownUser("grandma")]
        let responder = try ScriptedHTTPResponder(refusals.map { Self.error($0.httpStatus, ErrorBody(refusal: $0)) })
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        for refusal in refusals {
            let error = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.setMember(Self.trip, user: "grandma", role: .viewer)) }
            #expect(error == .spaceRefused(refusal))
        }
    }

    @Test("the scripted reference handler answers a refusal with its status and code, which the transport reads back as the same refusal")
    func referenceHandlerRefusal() async throws {
        let responder = try ScriptedHTTPResponder([ReferenceHTTPHandler.reply(.spaceRefused(.lastOwner(Self.trip)))])
        defer { responder.stop() }
        guard case .respond(let status, _, _) = ReferenceHTTPHandler.reply(.spaceRefused(.lastOwner(Self.trip))) else {
            Issue.record("a refusal is answered")
            return
        }
        #expect(status == 409)
        let error = await HTTPTransportTests.transportError { () async throws(TransportError) in
            try await HTTPTransportTests.transport(responder).change(.leave(Self.trip))
        }
        #expect(error == .spaceRefused(.lastOwner(Self.trip)))
    }

    @Test("a refusal code under another status, or one whose body lacks its space, is classified by its status")
    func mismatchedRefusals() async throws {
        let responder = try ScriptedHTTPResponder([
            Self.error(400, ErrorBody(refusal: .noSuchSpace(Self.trip))),
            Self.error(404, ErrorBody(code: .noSuchSpace, message: "who knows")),
        ])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let wrongStatus = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.leave(Self.trip)) }
        guard case .permanent? = wrongStatus else { Issue.record("\(String(describing: wrongStatus))"); return }
        let noSpace = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.leave(Self.trip)) }
        guard case .permanent? = noSpace else { Issue.record("\(String(describing: noSpace))"); return }
    }

    @Test("a 410 naming spaceKinds is cursorExpired with the personal kinds and every space's, each once")
    func expiredSpaceCursors() async throws {
        let responder = try ScriptedHTTPResponder([
            Self.error(410, ErrorBody(code: .cursorExpired, message: "resync", kinds: ["pin"],
                                      spaceKinds: [Self.trip: ["pin", "note"], Self.gym: ["tag"]])),
            Self.error(410, ErrorBody(code: .cursorExpired, message: "resync", spaceKinds: [Self.trip: ["note"]])),
        ])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let both = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.pull(Self.spacedPull) }
        #expect(both == .cursorExpired(kinds: ["pin", "note", "tag"]))
        let sharedOnly = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.pull(Self.spacedPull) }
        #expect(sharedOnly == .cursorExpired(kinds: ["note"]))
    }

    // MARK: Servers from before spaces

    @Test("a server from before spaces: a pull naming spaces refused as an unknown member is sent again without them, and later pulls and waits go without")
    func olderServerPulls() async throws {
        let page = PullPage(rows: [HTTPTransportTests.row], nextCursors: ["pin": PullCursor(updatedAt: 200, id: "p1")], hasMore: false)
        let responder = try ScriptedHTTPResponder([Self.unknownMember("$.spaces"), .ok(PullPageCodec.encode(page)), .ok(PullPageCodec.encode(page)),
                                                   .ok(ChangeWaitReplyCodec.encode(changed: false))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        #expect(try await transport.pull(Self.spacedPull) == page)
        #expect(try await transport.pull(Self.spacedPull) == page)
        #expect(try await transport.waitForChanges(after: ["pin": nil], spaces: Self.held, timeout: .seconds(1)) == .timedOut)
        let sent = responder.requests
        #expect(sent.count == 4)
        #expect(try PullRequestCodec.decode(sent[0].body).spaces == Self.held)
        var personal = Self.spacedPull
        personal.spaces = nil
        #expect(try PullRequestCodec.decode(sent[1].body) == personal)
        #expect(try PullRequestCodec.decode(sent[2].body) == personal)
        #expect(try ChangeWaitRequestCodec.decode(sent[3].body).spaces == nil)
        #expect(sent[1...].allSatisfy { $0.header("Sync-Row-Members") == "modelVersion" })
    }

    @Test("a server from before spaces: a wait naming spaces refused as an unknown member is sent again without them")
    func olderServerWaits() async throws {
        let responder = try ScriptedHTTPResponder([Self.unknownMember("$.spaces"), .ok(ChangeWaitReplyCodec.encode(changed: true))])
        defer { responder.stop() }
        #expect(try await HTTPTransportTests.transport(responder).waitForChanges(after: ["pin": nil], spaces: [:], timeout: .seconds(1)) == .changed)
        #expect(try ChangeWaitRequestCodec.decode(responder.requests[1].body).spaces == nil)
    }

    @Test("a server from before spaces: a push's shared mutations are rejected permanently and its personal ones pushed, then and later")
    func olderServerPushes() async throws {
        let personalResult = HTTPTransportTests.results[1]
        let responder = try ScriptedHTTPResponder([Self.unknownMember("$.mutations[0].space"), .ok(PushReplyCodec.encode([personalResult])),
                                                   .ok(PushReplyCodec.encode([personalResult]))])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let rejected = MutationResult(operationID: Self.mutations[0].operationID,
                                      outcome: .rejected(reason: "the server has no shared spaces: pin/p1@\(Self.trip) cannot be pushed", permanent: true))
        #expect(try await transport.push(Self.mutations) == [rejected, personalResult])
        #expect(try await transport.push(Self.mutations) == [rejected, personalResult])
        #expect(try await transport.push([Self.mutations[0]]) == [rejected], "nothing left to send")
        let sent = responder.requests
        #expect(sent.count == 3)
        #expect(try PushRequestCodec.decode(sent[1].body) == [Self.mutations[1]])
        #expect(try PushRequestCodec.decode(sent[2].body) == [Self.mutations[1]])
    }

    @Test("a server from before spaces: a read of a shared record refused as an unknown member is permanent, and later ones are refused without a request")
    func olderServerReads() async throws {
        let responder = try ScriptedHTTPResponder([Self.unknownMember("$.space")])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let key = RecordKey(kind: "pin", id: "p9", space: Self.trip)
        for _ in 0..<2 {
            let error = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.read(key) }
            #expect(error == .permanent(reason: "the server has no shared spaces"))
        }
        #expect(responder.requests.count == 1)
    }

    @Test("a server from before spaces: a membership call answered 404 not_found is permanent, saying the server has no shared spaces")
    func olderServerMembership() async throws {
        let notFound = Self.error(404, ErrorBody(code: .notFound, message: "no such path: /v1/spaces/create"))
        let responder = try ScriptedHTTPResponder([notFound, notFound])
        defer { responder.stop() }
        let transport = HTTPTransportTests.transport(responder)
        let create = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.change(.create(Self.trip, name: "x")) }
        #expect(create == .permanent(reason: "the server has no shared spaces (HTTP 404 from /v1/spaces/create: not_found (no such path: /v1/spaces/create))"))
        let list = await HTTPTransportTests.transportError { () async throws(TransportError) in try await transport.spaces() }
        guard case .permanent? = list else { Issue.record("\(String(describing: list))"); return }
    }
}
