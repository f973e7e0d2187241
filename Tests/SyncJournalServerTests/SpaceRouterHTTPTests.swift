import Foundation
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import SyncJournalWire
import Testing

/// Shared spaces through `sync-server`'s HTTP router, requests sent as raw
/// bytes, on SQLite and (when it runs) PostgreSQL: an owner, an editor, a
/// viewer and a user who is no member of the space.
@Suite("shared spaces over HTTP")
struct SpaceRouterHTTPTests {
    static let users = ["owner", "editor", "viewer", "stranger"]

    /// A started server with the four users and one space holding record `p1`.
    final class Served {
        let server: SyncServer
        let space = SpaceID.random()
        private let directory: TemporaryDirectory?
        private let schema: PostgreSQLTestSchema?

        init(_ backend: StorageBackend) throws {
            var options = SyncServerOptions()
            options.port = 0
            for user in SpaceRouterHTTPTests.users { try options.users.add(token: "t-\(user)", user: user) }
            switch backend {
            case .sqlite:
                let directory = try TemporaryDirectory(prefix: "syncjournal-spaces-http")
                options.databasePath = directory.file("sync.sqlite")
                self.directory = directory
                schema = nil
            case .postgres:
                let schema = try PostgreSQLTestSchema()
                options.postgresConnection = schema.connection
                self.schema = schema
                directory = nil
            }
            server = try SyncServer(options: options)
            try server.start()
        }

        deinit {
            server.shutdown()
            directory?.remove()
        }

        /// One request on a new connection; `space` adds `Sync-Row-Members: modelVersion, space`.
        func send(_ endpoint: SyncEndpoint, _ body: [UInt8], as user: String, space: Bool = true) throws -> RawClient.Response {
            var bytes = SyncServerFixture.post(endpoint.path, body: body, token: "t-\(user)")
            if space {
                // The header goes before the blank line ending the head.
                let head = Array("Sync-Row-Members: modelVersion, space\r\n".utf8)
                let end = try #require(String(decoding: bytes, as: UTF8.self).range(of: "\r\n\r\n")).lowerBound.utf16Offset(in: String(decoding: bytes, as: UTF8.self))
                bytes.insert(contentsOf: head, at: end + 2)
            }
            let client = try RawClient(port: server.port)
            try client.send(bytes)
            return try client.readResponse()
        }

        func change(_ change: SpaceChange, as user: String) throws -> RawClient.Response {
            try send(SyncEndpoint(change), SpaceChangeCodec.encode(change), as: user)
        }

        func push(_ mutation: Mutation, as user: String) throws -> MutationOutcome {
            let response = try send(.push, PushRequestCodec.encode([mutation]), as: user)
            guard response.status == 200 else { throw RawClient.Failure(description: "push: \(response.status) \(response.text)") }
            return try #require(try PushReplyCodec.decode(response.body, answering: [mutation]).first).outcome
        }

        func pull(as user: String, spaces: [SpaceID: SpaceCursors]? = [:]) throws -> PullPage {
            let response = try send(.pull, PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 100, spaces: spaces)), as: user)
            guard response.status == 200 else { throw RawClient.Failure(description: "pull: \(response.status) \(response.text)") }
            return try PullPageCodec.decode(response.body, namingSpaces: spaces != nil)
        }

        func read(_ id: String, in space: SpaceID, as user: String) throws -> RawClient.Response {
            try send(.read, ReadRequestCodec.encode(ReadRequest(kind: "pin", id: id, space: space)), as: user)
        }

        /// Creates the space (owner), adds the editor and the viewer, and has the owner create `p1` in it.
        func populate() throws -> ServerRow {
            #expect(try change(.create(space, name: "Trip"), as: "owner").status == 200)
            #expect(try change(.setMember(space, user: "editor", role: .editor), as: "owner").status == 200)
            #expect(try change(.setMember(space, user: "viewer", role: .viewer), as: "owner").status == 200)
            return try #require(try push(Mutations.create("p1", space: space), as: "owner").appliedRow)
        }
    }

    @Test("owners and editors push creates, updates and deletes into the space and the rows carry it; a viewer's and a stranger's are rejected permanently",
          arguments: StorageBackend.tested)
    func pushByRole(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let space = served.space
        var row = try served.populate()
        #expect(row.space == space)
        for user in ["owner", "editor"] {
            let created = try #require(try served.push(Mutations.create("new-\(user)", space: space), as: user).appliedRow)
            #expect(created.space == space)
            row = try #require(try served.push(Mutations.update("p1", base: row.updatedAt, ["title": .string(user)], space: space), as: user).appliedRow)
            #expect(row.space == space && row.fields["title"] == .string(user))
            #expect(try served.push(Mutations.delete("new-\(user)", base: created.updatedAt, space: space), as: user).appliedRow?.isTombstone == true)
        }
        for mutation in [Mutations.create("v1", space: space), Mutations.update("p1", base: row.updatedAt, ["title": .string("x")], space: space),
                         Mutations.delete("p1", base: row.updatedAt, space: space)] {
            #expect(try served.push(mutation, as: "viewer") == .rejected(reason: "read only: a viewer of space \(space)", permanent: true))
            #expect(try served.push(mutation, as: "stranger") == .rejected(reason: "no access to space \(space)", permanent: true))
        }
        let page = try served.pull(as: "viewer")
        #expect(page.rows.filter { $0.id == "p1" } == [row], "the refused mutations changed nothing")
    }

    @Test("every member pulls and reads the space's rows; a stranger gets nothing of them, and reads a hidden record exactly as a missing one",
          arguments: StorageBackend.tested)
    func pullAndReadByRole(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let row = try served.populate()
        for user in ["owner", "editor", "viewer"] {
            let page = try served.pull(as: user)
            #expect(page.rows == [row] && page.spaces.map(\.id) == [served.space] && page.lostSpaces.isEmpty)
            #expect(try ReadReplyCodec.decode(try served.read("p1", in: served.space, as: user).body) == row)
        }
        let strangers = try served.pull(as: "stranger")
        #expect(strangers.rows.isEmpty && strangers.spaces.isEmpty)
        let named = try served.pull(as: "stranger", spaces: [served.space: SpaceCursors(version: nil, cursors: [:])])
        #expect(named.rows.isEmpty && named.lostSpaces == [served.space])
        let hidden = try served.read("p1", in: served.space, as: "stranger")
        let missing = try served.read("p1", in: SpaceID.random(), as: "stranger")
        let absent = try served.read("nothing", in: served.space, as: "owner")
        #expect(hidden.status == 200 && hidden.body == missing.body && hidden.body == absent.body && hidden.text == #"{"row":null}"#)
    }

    @Test("membership calls by role: owners manage, editors and viewers get 403 forbidden, a stranger 404 no_such_space worded as for a space that does not exist",
          arguments: StorageBackend.tested)
    func membershipByRole(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let space = served.space
        _ = try served.populate()
        for user in ["editor", "viewer"] {
            let refused = try served.change(.rename(space, name: "Mine"), as: user)
            #expect(try refused.status == 403 && SyncServerFixture.error(refused).code == .forbidden)
            #expect(try served.change(.setMember(space, user: "stranger", role: .viewer), as: user).status == 403)
            #expect(try served.change(.setMember(space, user: user == "editor" ? "viewer" : "editor", role: .owner), as: user).status == 403,
                    "no re-roling another member")
            #expect(try served.change(.setMember(space, user: user, role: .owner), as: user).status == 403, "no promoting oneself")
            #expect(try served.change(.removeMember(space, user: "owner"), as: user).status == 403)
            #expect(try served.change(.delete(space), as: user).status == 403)
        }
        let roles = try SpaceListReplyCodec.decode(try served.send(.listSpaces, ListSpacesRequestCodec.encode(), as: "owner").body).first?.members
        #expect(roles?.sorted { $0.user < $1.user }.map { "\($0.user) \($0.role)" } == ["editor editor", "owner owner", "viewer viewer"],
                "every refused call left the roles as they were")
        let other = SpaceID.random()
        for change in [SpaceChange.rename(space, name: "x"), .setMember(space, user: "stranger", role: .owner), .removeMember(space, user: "owner"),
                       .leave(space), .delete(space)] {
            let hidden = try served.change(change, as: "stranger")
            let missing = try served.change(change.moved(to: other), as: "stranger")
            #expect(hidden.status == 404 && missing.status == 404)
            #expect(hidden.text.replacingOccurrences(of: space.description, with: "ID") == missing.text.replacingOccurrences(of: other.description, with: "ID"))
        }
        #expect(try served.change(.create(space, name: "Trip"), as: "stranger").status == 409)
        #expect(try served.change(.setMember(space, user: "nobody", role: .viewer), as: "owner").status == 404)
        #expect(try served.change(.leave(space), as: "owner").status == 409, "the last owner cannot leave")
        let renamed = try served.change(.rename(space, name: "Summer"), as: "owner")
        #expect(try SpaceChangeReplyCodec.decode(renamed.body, at: .renameSpace)?.name == "Summer")
        let list = try served.send(.listSpaces, ListSpacesRequestCodec.encode(), as: "viewer")
        #expect(try SpaceListReplyCodec.decode(list.body).map(\.role) == [.viewer])
        #expect(try served.change(.removeMember(space, user: "viewer"), as: "viewer").text == "{}", "removing oneself answers as a leave")
        #expect(try served.change(.leave(space), as: "editor").text == "{}")
        #expect(try served.change(.delete(space), as: "owner").text == "{}")
        #expect(try SpaceListReplyCodec.decode(try served.send(.listSpaces, ListSpacesRequestCodec.encode(), as: "owner").body).isEmpty)
    }

    @Test("a push, pull or read naming a shared space without Sync-Row-Members: space is 400 bad_request, and nothing is applied",
          arguments: StorageBackend.tested)
    func spaceNeedsTheHeader(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        _ = try served.populate()
        let bodies: [(SyncEndpoint, [UInt8])] = [
            (.push, PushRequestCodec.encode([Mutations.create("p2", space: served.space)])),
            (.pull, PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))),
            (.read, ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1", space: served.space))),
        ]
        for (endpoint, body) in bodies {
            let response = try served.send(endpoint, body, as: "owner", space: false)
            #expect(try response.status == 400 && SyncServerFixture.error(response).code == .badRequest, "\(endpoint)")
            #expect(response.text.contains("Sync-Row-Members: space"))
        }
        #expect(try served.pull(as: "owner").rows.map(\.id) == ["p1"])
    }

    @Test("a removed member's pull lists the space as lost, and its push and read of the space are refused", arguments: StorageBackend.tested)
    func removedMember(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let row = try served.populate()
        #expect(try served.change(.removeMember(served.space, user: "editor"), as: "owner").status == 200)
        let page = try served.pull(as: "editor", spaces: [served.space: SpaceCursors(version: nil, cursors: [:])])
        #expect(page.rows.isEmpty && page.lostSpaces == [served.space])
        #expect(try served.push(Mutations.update("p1", base: row.updatedAt, ["title": .string("late")], space: served.space), as: "editor")
                == .rejected(reason: "no access to space \(served.space)", permanent: true))
        #expect(try served.read("p1", in: served.space, as: "editor").text == #"{"row":null}"#)
    }

    @Test("a wait naming the space by a stranger or a removed member answers at once instead of parking, and the pull it brings names the space lost with none of its rows",
          arguments: StorageBackend.tested)
    func waitOutsideTheSpace(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        _ = try served.populate()
        #expect(try served.change(.removeMember(served.space, user: "editor"), as: "owner").status == 200)
        let named = [served.space: SpaceCursors(version: nil, cursors: [:])]
        for user in ["stranger", "editor"] {
            let wait = ChangeWaitRequest(cursors: ["pin": nil], timeoutMilliseconds: 60_000, spaces: named)
            let response = try served.send(.wait, ChangeWaitRequestCodec.encode(wait), as: user)
            #expect(ChangeWaitServer.answers(response, changed: true), "\(user): \(response.status) \(response.text)")
            let page = try served.pull(as: user, spaces: named)
            #expect(page.rows.isEmpty && page.lostSpaces == [served.space] && page.spaces.isEmpty, "\(user)")
        }
    }

    @Test("a shared space's cursor behind a purged tombstone is 410 cursor_expired naming the kind under spaceKinds, not under kinds",
          arguments: StorageBackend.tested)
    func expiredSpaceCursor(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        let row = try served.populate()
        let early = try served.pull(as: "viewer")
        let held = [served.space: SpaceCursors(version: early.spaces.first?.version, cursors: ["pin": PullCursor(updatedAt: row.updatedAt - 1, id: "a")])]
        let gone = try #require(try served.push(Mutations.delete("p1", base: row.updatedAt, space: served.space), as: "owner").appliedRow)
        _ = try served.push(Mutations.create("p2", space: served.space), as: "owner")
        try served.server.storage.purgeTombstones(olderThan: gone.updatedAt + 1, kind: nil)
        let response = try served.send(.pull, PullRequestCodec.encode(PullRequest(cursors: ["pin": nil], limit: 10, spaces: held)), as: "viewer")
        let body = try SyncServerFixture.error(response)
        #expect(response.status == 410 && body.code == .cursorExpired)
        #expect(body.kinds == [] && body.spaceKinds == [served.space: ["pin"]])
    }

    @Test("a viewer's wait over spaces is woken by an editor's push into the shared space", arguments: StorageBackend.tested)
    func waitWokenBySharedPush(_ backend: StorageBackend) throws {
        let served = try Served(backend)
        _ = try served.populate()
        let page = try served.pull(as: "viewer")
        let held = [served.space: SpaceCursors(version: page.spaces.first?.version, cursors: ["pin": page.nextSpaceCursors[served.space]?["pin"]])]
        let wait = ChangeWaitRequest(cursors: ["pin": page.nextCursors["pin"] ?? nil], timeoutMilliseconds: 60_000, spaces: held)
        let client = try RawClient(port: served.server.port, timeoutSeconds: 60)
        try client.send(SyncServerFixture.post(SyncEndpoint.wait.path, body: ChangeWaitRequestCodec.encode(wait), token: "t-viewer"))
        #expect(served.server.changeWaits.waitUntil(timeoutMilliseconds: ChangeWaitServer.patience, parkedOnly: true) { $0 >= 1 },
                "the wait is parked: nothing new yet")
        _ = try served.push(Mutations.create("p2", space: served.space), as: "editor")
        #expect(ChangeWaitServer.answers(try client.readResponse(), changed: true))
    }
}

extension SpaceChange {
    /// The same change of another space.
    fileprivate func moved(to other: SpaceID) -> SpaceChange {
        switch self {
        case .create(_, let name): return .create(other, name: name)
        case .rename(_, let name): return .rename(other, name: name)
        case .setMember(_, let user, let role): return .setMember(other, user: user, role: role)
        case .removeMember(_, let user): return .removeMember(other, user: user)
        case .leave: return .leave(other)
        case .delete: return .delete(other)
        }
    }
}
