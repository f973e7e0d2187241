import SyncJournalProtocol
import SyncJournalWire

/// The optional row members a request's client reads, from its
/// `Sync-Row-Members` header (journals/PROTOCOL.md, "Model versions",
/// "Membership"). A client older than a member would refuse a whole reply
/// holding it, so a row goes without a member its client did not name.
struct RowMembers: Sendable, Hashable {
    /// Whether rows may carry `modelVersion`.
    var modelVersion: Bool
    /// Whether rows may carry `space`: a request that names a shared space must say so.
    var space: Bool

    /// The members `request`'s header names (none without the header).
    init(_ request: HTTPRequest) {
        let members = RowMembersHeader.members(in: request.headers.filter { $0.hasName(RowMembersHeader.name) }.map(\.value))
        modelVersion = members.contains(RowMembersHeader.modelVersion)
        space = members.contains(RowMembersHeader.space)
    }

    /// Refuses a request that names a shared space at `path` from a client
    /// that did not say it reads rows' `space`.
    ///
    /// - Throws: ``SyncRouter/RouteFailure/spaceNotRead(path:)`` (400 `bad_request`).
    func requireSpace(for path: @autoclosure () -> String) throws(SyncRouter.RouteFailure) {
        if !space { throw .spaceNotRead(path: path()) }
    }

    /// ``requireSpace(for:)`` for the first of `mutations` (a push's, in
    /// order) that goes into a shared space, if any does.
    func requireSpace(namedBy mutations: some Sequence<Mutation>) throws(SyncRouter.RouteFailure) {
        guard !space else { return }
        for (index, mutation) in mutations.enumerated() where !mutation.space.isPersonal {
            throw .spaceNotRead(path: "$.mutations[\(index)].space")
        }
    }
}
