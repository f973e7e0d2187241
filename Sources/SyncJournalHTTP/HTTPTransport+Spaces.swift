import SyncJournalProtocol
import SyncJournalWire

/// Shared spaces (journals/PROTOCOL.md, "Spaces", "Membership"): reads of
/// a shared space's records, membership changes and the list of spaces.
extension HTTPTransport {
    /// Reads one row of any space: a personal one as ``read(kind:id:)``
    /// does, a shared one with its `space` (`nil`: no live row, or a space
    /// the user is not a member of). A server from before spaces holds no
    /// shared row: the read is refused as permanent, without a request once
    /// the transport knows.
    ///
    /// ```swift
    /// let row = try await transport.read(RecordKey(kind: "pin", id: "p1", space: trip))
    /// ```
    public func read(_ key: RecordKey) async throws(TransportError) -> ServerRow? {
        let request = ReadRequest(kind: key.kind, id: key.id, space: key.space)
        guard !key.space.isPersonal else { return try await read(request) }
        guard spaceSupport.isAssumed else { throw Self.noSharedSpaces }
        do {
            return try await read(request)
        } catch {
            guard case .permanent(let reason) = error, Self.refuses(reason, member: "$.space") else { throw error }
            spaceSupport.markRefused()
            throw Self.noSharedSpaces
        }
    }

    /// Posts `change` to its membership path and returns the space as it
    /// is after it (`nil` after a leave or a delete). A refusal the server
    /// gives (404 `no_such_space`, 403 `forbidden`, 409 `space_exists`,
    /// `last_owner`, `too_many`, 404 `unknown_user`) is
    /// ``TransportError/spaceRefused(_:)``; a server from before spaces
    /// (404 `not_found`) is ``TransportError/permanent(reason:)``. A reply
    /// describing another space than the one changed is malformed (transient).
    ///
    /// ```swift
    /// let space = try await transport.change(.create(.random(), name: "Weekend pins"))
    /// ```
    public func change(_ change: SpaceChange) async throws(TransportError) -> Space? {
        let endpoint = SyncEndpoint(change)
        let reply = try await send(endpoint, body: SpaceChangeCodec.encode(change), pulledKinds: [], namesSpace: true)
        let space: Space?
        do {
            space = try SpaceChangeReplyCodec.decode(reply.body, at: endpoint, parser: parser)
        } catch {
            throw Self.malformed(endpoint, error)
        }
        if let space, space.id != change.space {
            throw .transient(reason: "malformed reply to \(endpoint.path): it describes space \(space.id), not \(change.space)",
                             retryAfter: nil)
        }
        return space
    }

    /// Posts `{}` to `/v1/spaces/list` and returns every shared space the
    /// user is a member of, ordered by id. A server from before spaces
    /// (404) is ``TransportError/permanent(reason:)``.
    ///
    /// ```swift
    /// for space in try await transport.spaces() { print(space.name, space.role) }
    /// ```
    public func spaces() async throws(TransportError) -> [Space] {
        let reply = try await send(.listSpaces, body: ListSpacesRequestCodec.encode(), pulledKinds: [])
        do {
            return try SpaceListReplyCodec.decode(reply.body, parser: parser)
        } catch {
            throw Self.malformed(.listSpaces, error)
        }
    }

    /// Pushes the personal mutations of `mutations` and answers each
    /// mutation into a shared space as rejected, permanently: the server
    /// has no shared spaces, so resending it would never help.
    func pushRejectingShared(_ mutations: [Mutation], expecting expectation: ServerExpectation?) async throws(TransportError) -> [MutationResult] {
        let personal = mutations.filter { $0.space.isPersonal }
        var answered = personal.isEmpty ? [] : try await push(personal, expecting: expectation)[...]
        return mutations.map { mutation in
            if mutation.space.isPersonal, let result = answered.popFirst() { return result }
            return MutationResult(operationID: mutation.operationID,
                                  outcome: .rejected(reason: "the server has no shared spaces: \(mutation.key) cannot be pushed", permanent: true))
        }
    }

    /// What a request about a shared space gets from a server without them.
    static var noSharedSpaces: TransportError { .permanent(reason: "the server has no shared spaces") }
}
