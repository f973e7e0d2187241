import SyncJournalProtocol
import SyncJournalServer
import SyncJournalTesting
import Testing

/// One fresh server of a ``SpaceBackend``, driven through the calls a
/// router makes (push, pull, read, membership changes), whatever it is.
/// The user `nobody` is unknown to it; every other name is a user.
final class SpacesUnderTest: @unchecked Sendable {
    static let unknownUser = "nobody"

    let backend: SpaceBackend
    private let reference: ReferenceServer?
    private let subject: StorageUnderTest?

    init(_ backend: SpaceBackend) async throws {
        self.backend = backend
        let isKnown: @Sendable (String) -> Bool = { $0 != SpacesUnderTest.unknownUser }
        switch backend {
        case .reference:
            let server = ReferenceServer()
            await server.setKnownUsers(isKnown)
            reference = server
            subject = nil
        case .sqlite, .postgres:
            reference = nil
            subject = try StorageUnderTest(backend == .sqlite ? .sqlite : .postgres, knownUsers: isKnown)
        }
    }

    /// The storage, for the backends that have one.
    var storage: (any SyncStorage)? { subject?.storage }

    func push(_ user: String, _ mutations: [Mutation]) async throws -> [MutationResult] {
        if let reference { return try await reference.push(user: user, mutations) }
        return try subject!.storage.push(user: user, mutations)
    }

    /// A push stating what the device knows of the server (see ``ServerExpectation``).
    func push(_ user: String, _ mutations: [Mutation], expecting expectation: ServerExpectation) async throws -> [MutationResult] {
        if let reference { return try await reference.push(user: user, mutations, expecting: expectation) }
        return try subject!.storage.push(user: user, mutations, expecting: expectation)
    }

    /// The one outcome of a push of `mutation`.
    func outcome(_ user: String, _ mutation: Mutation) async throws -> MutationOutcome {
        try #require(try await push(user, [mutation]).first).outcome
    }

    func pull(_ user: String, _ request: PullRequest) async throws -> PullPage {
        if let reference { return try await reference.transport(user: user).pull(request) }
        return try subject!.storage.pull(user: user, request)
    }

    /// Every page of a pull from `spaces` (`nil`: personal only), cursors carried as a device carries them.
    func pullAll(_ user: String, kinds: [String] = ["pin"], spaces: [SpaceID: SpaceCursors]? = [:], limit: Int = 500) async throws
        -> (rows: [ServerRow], pages: [PullPage]) {
        var cursors: [String: PullCursor?] = Dictionary(uniqueKeysWithValues: kinds.map { ($0, nil) })
        var held = spaces
        var rows: [ServerRow] = []
        var pages: [PullPage] = []
        while true {
            let page = try await pull(user, PullRequest(cursors: cursors, limit: limit, spaces: held))
            pages.append(page)
            rows += page.rows
            for (kind, cursor) in page.nextCursors { cursors[kind] = cursor }
            if held != nil {
                for space in page.spaces { held?[space.id, default: SpaceCursors(version: nil, cursors: [:])].version = space.version }
                for (space, next) in page.nextSpaceCursors {
                    for (kind, cursor) in next { held?[space, default: SpaceCursors(version: nil, cursors: [:])].cursors[kind] = cursor }
                }
                for lost in page.lostSpaces { held?[lost] = nil }
            }
            if !page.hasMore || pages.count > 10_000 { return (rows, pages) }
        }
    }

    func read(_ user: String, _ key: RecordKey) async throws -> ServerRow? {
        if let reference { return await reference.read(user: user, key) }
        return try subject!.storage.read(user: user, key)
    }

    @discardableResult
    func change(_ user: String, _ change: SpaceChange) async throws -> Space? {
        if let reference { return try await reference.change(user: user, change) }
        return try subject!.storage.change(user: user, change)
    }

    /// How the server refuses `change` from `user`, `nil` when it applies it.
    func refusal(_ user: String, _ change: SpaceChange) async -> SpaceRefusal? {
        do {
            try await self.change(user, change)
            return nil
        } catch let error as TransportError {
            if case .spaceRefused(let refusal) = error { return refusal }
            return .tooMany(reason: "not a refusal: \(error)")
        } catch let error as StorageError {
            if case .spaceRefused(let refusal) = error { return refusal }
            return .tooMany(reason: "not a refusal: \(error)")
        } catch {
            return .tooMany(reason: "not a refusal: \(error)")
        }
    }

    func spaces(_ user: String) async throws -> [Space] {
        if let reference { return await reference.spaces(user: user) }
        return try subject!.storage.spaces(user: user)
    }

    func purgeTombstones(olderThan stamp: Int64) async throws {
        if let reference {
            await reference.purgeTombstones(olderThan: stamp)
            return
        }
        try subject!.storage.purgeTombstones(olderThan: stamp, kind: nil)
    }

    /// Lets the clock move on, so later writes get later stamps.
    func tick() async {
        if let reference { await reference.tick(1) }
        if let subject { subject.clock.set(subject.clock.now + 1) }
    }
}
