import Foundation
import Testing
import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting

/// Shared spaces in every server's storage (journals/PROTOCOL.md, "Spaces",
/// "Membership", "Pull across spaces"): the same checks against the
/// reference server, SQLite, and PostgreSQL when it runs.
@Suite("shared spaces, every backend")
struct SpaceStorageTests {
    static let trip = SpaceID("2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b")!
    static let nowhere = SpaceID("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")!

    /// A space `trip` owned by dad, kid its editor and gran its viewer.
    static func family(_ backend: SpaceBackend) async throws -> SpacesUnderTest {
        let server = try await SpacesUnderTest(backend)
        try await server.change("dad", .create(trip, name: "Weekend pins"))
        try await server.change("dad", .setMember(trip, user: "kid", role: .editor))
        try await server.change("dad", .setMember(trip, user: "gran", role: .viewer))
        return server
    }

    @Test("each role pushes, reads and pulls as its role allows; a stranger gets nothing and is told the same as for no space",
          arguments: SpaceBackend.tested)
    func rolesAndRecords(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        let made = try #require(try await server.outcome("dad", Mutations.create("p1", space: trip)).appliedRow)
        #expect(made.space == trip)
        await server.tick()
        let edited = try #require(try await server.outcome("kid", Mutations.update("p1", base: made.updatedAt, ["title": .string("kid")], space: trip))
            .appliedRow)
        #expect(edited.fields["title"] == .string("kid") && edited.space == trip)
        let kids = try #require(try await server.outcome("kid", Mutations.create("p2", space: trip)).appliedRow)
        await server.tick()
        #expect(try await server.outcome("kid", Mutations.delete("p2", base: kids.updatedAt, space: trip)).appliedRow?.isTombstone == true)
        for mutation in [Mutations.create("p3", space: trip), Mutations.update("p1", base: edited.updatedAt, ["x": .int(1)], space: trip),
                         Mutations.delete("p1", base: edited.updatedAt, space: trip)] {
            #expect(try await server.outcome("gran", mutation) == .rejected(reason: "read only: a viewer of space \(trip)", permanent: true))
            #expect(try await server.outcome("stranger", mutation) == .rejected(reason: "no access to space \(trip)", permanent: true))
        }
        let key = RecordKey(kind: "pin", id: "p1", space: trip)
        for member in ["dad", "kid", "gran"] { #expect(try await server.read(member, key) == edited, "\(member)") }
        #expect(try await server.read("stranger", key) == nil)
        #expect(try await server.read("dad", RecordKey(kind: "pin", id: "p1")) == nil, "the personal space is another space")
        for member in ["dad", "kid", "gran"] {
            let page = try await server.pull(member, PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
            #expect(page.rows.map(\.id) == ["p1", "p2"], "\(member)")
            #expect(page.spaces.map(\.id) == [trip] && page.spaces.first?.role == (member == "dad" ? .owner : member == "kid" ? .editor : .viewer))
            #expect(page.spaces.first?.members.map(\.user) == ["dad", "gran", "kid"], "members in user byte order")
            #expect(page.nextSpaceCursors[trip]?["pin"] != nil && page.nextCursors.isEmpty && page.lostSpaces.isEmpty)
        }
        let personalOnly = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10))
        #expect(personalOnly.rows.isEmpty && personalOnly.spaces.isEmpty, "a pull without spaces is the personal space alone")
        let strangers = try await server.pull("stranger", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [trip: SpaceCursors(version: nil, cursors: [:])]))
        #expect(strangers.rows.isEmpty && strangers.spaces.isEmpty && strangers.lostSpaces == [trip])
    }

    @Test("a member removed from a space, whose device saw the space's newest stamps, pulls and pushes stating that seen stamp and is never told the server went back in time",
          arguments: SpaceBackend.tested)
    func removedMemberKeepsItsSeenStamp(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        await server.tick()
        let made = try #require(try await server.outcome("kid", Mutations.create("p1", space: trip)).appliedRow)
        let named = [trip: SpaceCursors(version: nil, cursors: [:])]
        let seen = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: named))
        #expect(seen.rows.map(\.id) == ["p1"])
        let identity = try #require(seen.server)
        let expectation = ServerExpectation(identity: identity, seenStamp: made.updatedAt)
        try await server.change("dad", .removeMember(trip, user: "kid"))

        let page = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, expectation: expectation, spaces: named))
        #expect(page.lostSpaces == [trip] && page.rows.isEmpty)
        let pushed = try await server.push("kid", [Mutations.create("home")], expecting: expectation)
        #expect(pushed.first?.outcome.appliedRow != nil)
    }

    @Test("membership calls by role: owners manage, members leave, the last owner stays, unknown users and full spaces are refused",
          arguments: SpaceBackend.tested)
    func membershipByRole(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        let before = try #require(try await server.spaces("kid").first)
        #expect(await server.refusal("kid", .rename(trip, name: "Mine")) == .forbidden(trip, role: .editor))
        #expect(await server.refusal("gran", .setMember(trip, user: "mom", role: .owner)) == .forbidden(trip, role: .viewer))
        #expect(await server.refusal("kid", .removeMember(trip, user: "gran")) == .forbidden(trip, role: .editor))
        #expect(await server.refusal("kid", .delete(trip)) == .forbidden(trip, role: .editor))
        #expect(await server.refusal("dad", .setMember(trip, user: SpacesUnderTest.unknownUser, role: .viewer))
                == .unknownUser(SpacesUnderTest.unknownUser))
        #expect(await server.refusal("kid", .create(trip, name: "Weekend pins")) == .spaceExists(trip))
        #expect(await server.refusal("dad", .create(trip, name: "Other name")) == .spaceExists(trip))
        #expect(try await server.change("dad", .create(trip, name: "Weekend pins"))?.members.count == 3, "a resend of the create answers the space")
        for change in [SpaceChange.leave(trip), .removeMember(trip, user: "dad"), .setMember(trip, user: "dad", role: .editor)] {
            #expect(await server.refusal("dad", change) == .lastOwner(trip), "\(change)")
        }
        await server.tick()
        let renamed = try #require(try await server.change("dad", .rename(trip, name: "Trip")))
        #expect(renamed.name == "Trip" && renamed.version > before.version && renamed.role == .owner)
        #expect(try await server.change("dad", .setMember(trip, user: "mom", role: .owner))?.members.count == 4)
        #expect(try await server.change("dad", .setMember(trip, user: "dad", role: .editor))?.role == .editor, "another owner remains")
        #expect(try await server.change("gran", .leave(trip)) == nil)
        #expect(try await server.change("kid", .removeMember(trip, user: "kid")) == nil, "a member removes themself")
        #expect(try await server.spaces("kid").isEmpty)
        #expect(try await server.spaces("gran").isEmpty)
        #expect(try await server.spaces("mom").map(\.members) == [[SpaceMember(user: "dad", role: .editor), SpaceMember(user: "mom", role: .owner)]])
        #expect(try await server.change("mom", .delete(trip)) == nil)
        #expect(try await server.spaces("dad").isEmpty)
        #expect(await server.refusal("dad", .rename(trip, name: "Back")) == .noSuchSpace(trip))
    }

    @Test("a user in 1,000 spaces cannot create or join another", arguments: [SpaceBackend.reference, .sqlite])
    func spacesPerUserLimit(backend: SpaceBackend) async throws {
        let server = try await SpacesUnderTest(backend)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<ProtocolLimits.maximumSpacesPerUser { try await server.change("busy", .create(.random(using: &generator), name: "s")) }
        guard case .tooMany? = await server.refusal("busy", .create(.random(using: &generator), name: "one more")) else {
            Issue.record("a 1,001st space was made")
            return
        }
        let other = SpaceID.random(using: &generator)
        try await server.change("dad", .create(other, name: "s"))
        guard case .tooMany? = await server.refusal("dad", .setMember(other, user: "busy", role: .viewer)) else {
            Issue.record("a user in 1,000 spaces joined another")
            return
        }
    }

    @Test("a space the caller is not a member of answers exactly as one that does not exist: no probing",
          arguments: SpaceBackend.tested)
    func noProbing(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        _ = try await server.push("dad", [Mutations.create("p1", space: Self.trip)])
        func answers(_ space: SpaceID) async throws -> [String] {
            var seen: [String] = []
            let key = RecordKey(kind: "pin", id: "p1", space: space)
            seen.append("\(String(describing: try await server.read("stranger", key)))")
            for mutation in [Mutations.create("p1", space: space), Mutations.update("p1", base: 1, ["a": .int(1)], space: space),
                             Mutations.delete("p1", base: 1, space: space)] {
                seen.append("\(try await server.outcome("stranger", mutation))")
            }
            for change in [SpaceChange.rename(space, name: "x"), .setMember(space, user: "stranger", role: .owner),
                           .removeMember(space, user: "dad"), .leave(space), .delete(space)] {
                seen.append("\(String(describing: await server.refusal("stranger", change)))")
            }
            let page = try await server.pull("stranger", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [space: SpaceCursors(version: 1, cursors: [:])]))
            seen.append("\(page.rows.count) \(page.spaces.count) \(page.lostSpaces.count)")
            return seen.map { $0.replacingOccurrences(of: space.description, with: "SPACE") }
        }
        #expect(try await answers(Self.trip) == answers(Self.nowhere))
    }

    @Test("the pins race: the owner deletes the pins it saw while an editor adds one; the editor's pin survives",
          arguments: SpaceBackend.tested)
    func pinsRace(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        _ = try await server.push("dad", [Mutations.create("p1", space: trip), Mutations.create("p2", space: trip)])
        let seen = try await server.pullAll("dad").rows
        #expect(seen.map(\.id) == ["p1", "p2"])
        await server.tick()
        _ = try await server.push("kid", [Mutations.create("p3", ["title": .string("tapas")], space: trip)])
        await server.tick()
        let deletes = try await server.push("dad", seen.map { Mutations.delete($0.id, base: $0.updatedAt, space: trip) })
        #expect(deletes.allSatisfy { $0.outcome.appliedRow?.isTombstone == true })
        let live = try await server.pullAll("kid").rows.filter { !$0.isTombstone }
        #expect(live.map(\.id) == ["p3"])
        #expect(try await server.read("dad", RecordKey(kind: "pin", id: "p3", space: trip))?.fields == ["title": .string("tapas")])
    }

    @Test("a removed member's pull lists the space as lost and its pushes are refused; added again, it backfills from the beginning",
          arguments: SpaceBackend.tested)
    func removalAndReAdd(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        _ = try await server.push("dad", [Mutations.create("p1", space: trip)])
        let first = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        let held = [trip: SpaceCursors(version: first.spaces.first?.version, cursors: ["pin": first.nextSpaceCursors[trip]?["pin"]])]
        try await server.change("dad", .removeMember(trip, user: "kid"))
        let after = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: held))
        #expect(after.lostSpaces == [trip] && after.rows.isEmpty && after.spaces.isEmpty)
        #expect(try await server.outcome("kid", Mutations.create("p9", space: trip)) == .rejected(reason: "no access to space \(trip)", permanent: true))
        #expect(try await server.read("kid", RecordKey(kind: "pin", id: "p1", space: trip)) == nil)
        await server.tick()
        _ = try await server.push("dad", [Mutations.create("p2", space: trip)])
        try await server.change("dad", .setMember(trip, user: "kid", role: .viewer))
        let back = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        #expect(back.rows.map(\.id) == ["p1", "p2"], "backfilled from the beginning")
        #expect(back.spaces.map(\.role) == [.viewer] && back.lostSpaces.isEmpty)
    }

    @Test("joining a space of 10,000 rows backfills it across pages, in order, each row once", arguments: SpaceBackend.tested)
    func largeBackfill(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        for batch in 0..<10 {
            let results = try await server.push("dad", (0..<1_000).map { Mutations.create(String(format: "p%05d", batch * 1_000 + $0), space: trip) })
            #expect(results.allSatisfy { $0.outcome.appliedRow != nil })
        }
        try await server.change("dad", .setMember(trip, user: "newcomer", role: .viewer))
        let (rows, pages) = try await server.pullAll("newcomer", limit: 1_000)
        #expect(rows.count == 10_000 && Set(rows.map(\.id)).count == 10_000)
        #expect(pages.count > 1 && pages.first?.spaces.map(\.id) == [trip], "the first page describes the space joined")
        #expect(zip(rows, rows.dropFirst()).allSatisfy { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) })
    }

    @Test("a user in 200 spaces pulls them all in one request: personal rows first, then spaces by id; once current, nothing is read again",
          arguments: SpaceBackend.tested)
    func twoHundredSpaces(backend: SpaceBackend) async throws {
        let server = try await SpacesUnderTest(backend)
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<200).map { _ in SpaceID.random(using: &generator) }
        for id in ids {
            try await server.change("dad", .create(id, name: "space"))
            try await server.change("dad", .setMember(id, user: "kid", role: .editor))
            _ = try await server.push("dad", [Mutations.create("p", space: id)])
        }
        _ = try await server.push("kid", [Mutations.create("mine")])
        let started = ContinuousClock.now
        let page = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 1_000, spaces: [:]))
        let firstPull = ContinuousClock.now - started
        #expect(!page.hasMore && page.rows.count == 201 && page.spaces.count == 200)
        #expect(page.rows.first?.space == .personal && page.rows.dropFirst().map(\.space) == ids.sorted(by: <))
        var held: [SpaceID: SpaceCursors] = [:]
        for space in page.spaces { held[space.id] = SpaceCursors(version: space.version, cursors: ["pin": page.nextSpaceCursors[space.id]?["pin"]]) }
        let steady = ContinuousClock.now
        let again = try await server.pull("kid", PullRequest(cursors: ["pin": page.nextCursors["pin"]], limit: 1_000, spaces: held))
        let steadyPull = ContinuousClock.now - steady
        #expect(again.rows.isEmpty && again.spaces.isEmpty && again.lostSpaces.isEmpty && !again.hasMore)
        print("spaces: \(backend) pull of 200 spaces: first \(firstPull), once current \(steadyPull)")
    }

    @Test("a PostgreSQL database of schema version 6 upgrades in place: its rows stay in their owners' personal spaces",
          arguments: StorageBackend.tested.filter { $0 == .postgres })
    func postgresUpgradeFromVersion6(backend: StorageBackend) throws {
        let subject = try StorageUnderTest(backend)
        let mine = try #require(try subject.storage.push(user: "u1", [Mutations.create("p1")]).first?.outcome.appliedRow)
        subject.storage.closeConnections()
        // Back to version 6's tables: no spaces, rows keyed by kind and id.
        for statement in ["drop table spaces", "drop table space_members", "drop table space_horizons", "alter table operations drop column space",
                          "alter table rows drop column space", "alter table rows add constraint rows_pkey primary key (kind, id)",
                          "create index rows_pull on rows (kind, owner, updated_at, id)", "update storage_schema set version = 6 where \"only\" = 1"] {
            try subject.query(statement)
        }
        let upgraded = try subject.reopen()
        defer { upgraded.closeConnections() }
        #expect(try subject.query("select version from storage_schema") == PostgreSQLSchema.version)
        #expect(try upgraded.read(user: "u1", kind: "pin", id: "p1") == mine)
        #expect(try upgraded.pull(user: "u1", PullRequest(cursors: ["pin": nil], limit: 10)).rows == [mine])
        #expect(try upgraded.push(user: "u2", [Mutations.create("p1")]).first?.outcome.appliedRow != nil, "u2's own p1")
        try upgraded.change(user: "u1", .create(Self.trip, name: "Trip"))
        #expect(try upgraded.push(user: "u1", [Mutations.create("p1", space: Self.trip)]).first?.outcome.appliedRow?.space == Self.trip)
    }

    @Test("tombstone horizons are kept per space: a cursor behind a purged tombstone of a space is expired, named by its kind",
          arguments: SpaceBackend.tested)
    func horizonsPerSpace(backend: SpaceBackend) async throws {
        let server = try await Self.family(backend)
        let trip = Self.trip
        let row = try #require(try await server.outcome("dad", Mutations.create("p1", space: trip)).appliedRow)
        let early = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: [:]))
        let held = [trip: SpaceCursors(version: early.spaces.first?.version, cursors: ["pin": early.nextSpaceCursors[trip]?["pin"]])]
        await server.tick()
        _ = try await server.push("dad", [Mutations.create("p2", space: trip)])
        await server.tick()
        let gone = try #require(try await server.outcome("dad", Mutations.delete("p1", base: row.updatedAt, space: trip)).appliedRow)
        await server.tick()
        let p3 = try #require(try await server.outcome("dad", Mutations.create("p3", space: trip)).appliedRow)
        try await server.purgeTombstones(olderThan: gone.updatedAt + 1)
        do {
            _ = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, spaces: held))
            Issue.record("a cursor behind the space's horizon was served")
        } catch let error as TransportError {
            #expect(error == .cursorExpired(kinds: ["pin"]))
        } catch let error as StorageError {
            #expect(error == .cursorExpired(kinds: [], spaceKinds: [trip: ["pin"]]), "the expired kind is the space's, not the personal space's")
        }
        let resync = try await server.pull("kid", PullRequest(cursors: ["pin": nil], limit: 10, isResync: true, spaces: held))
        #expect(resync.rows.map(\.id) == ["p2", "p3"] && resync.nextSpaceCursors[trip]?["pin"] == PullCursor(updatedAt: p3.updatedAt, id: "p3"))
        #expect(try await server.pull("gran", PullRequest(cursors: ["pin": nil], limit: 10)).rows.isEmpty, "the personal space has no horizon")
    }
}
