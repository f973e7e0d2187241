/// What the membership calls do, whatever the storage (journals/PROTOCOL.md,
/// "Spaces", "Membership"), over ``MembershipQueries`` inside one write
/// transaction. `sync-server`'s SQLite and PostgreSQL storages and the
/// in-memory reference server all decide with these.
package enum SpaceRules {
    /// Why `change` can never be applied, whoever sends it, or `nil`: a
    /// name of 1 to ``ProtocolLimits/maximumSpaceNameBytes`` bytes without
    /// U+0000. Checked before any statement (a 400, not a refusal).
    package static func problem(in change: SpaceChange) -> String? {
        switch change {
        case .create(_, let name), .rename(_, let name):
            if name.isEmpty || name.utf8.count > ProtocolLimits.maximumSpaceNameBytes {
                return "a space's name must be 1 to \(ProtocolLimits.maximumSpaceNameBytes) bytes of UTF-8, not \(name.utf8.count)"
            }
            if name.utf8.contains(0) { return "a space's name must not contain U+0000" }
            return nil
        case .setMember, .removeMember, .leave, .delete:
            return nil
        }
    }

    /// Applies `change` for `user` and returns the space as `user` sees it
    /// after it, `nil` when `user` is no longer a member (leave, delete,
    /// removing themselves).
    ///
    /// - A space `user` is not a member of, whether or not it exists, is
    ///   ``SpaceRefusal/noSuchSpace(_:)`` for every call but create.
    /// - create: `user` becomes the only owner; an id that exists answers
    ///   the space when `user` owns it under the same name (a resend), else
    ///   ``SpaceRefusal/spaceExists(_:)``.
    /// - rename, setMember, delete, removing another member: owners only
    ///   (``SpaceRefusal/forbidden(_:role:)``); any member removes themselves.
    /// - A space keeps an owner: the last one can neither leave, be removed
    ///   nor lose the role (``SpaceRefusal/lastOwner(_:)``).
    /// - A user is a member of at most ``ProtocolLimits/maximumSpacesPerUser``
    ///   spaces and a space has at most ``ProtocolLimits/maximumMembersPerSpace``
    ///   members (``SpaceRefusal/tooMany(reason:)``).
    /// - setMember of a user `isKnown` does not know is ``SpaceRefusal/unknownUser(_:)``.
    /// - Every change but delete takes a stamp from the space's counter and
    ///   makes it the space's version.
    package static func apply<Queries: MembershipQueries>(_ change: SpaceChange, user: String, isKnown: (String) -> Bool,
                                                          _ queries: Queries) throws(Queries.Failure) -> Space? {
        let id = change.space
        guard !id.isPersonal else { throw Queries.failure(.noSuchSpace(id)) }
        if case .create(_, let name) = change {
            if let existing = try queries.existingSpace(id, owner: user) {
                guard existing.ownedByUser, existing.name == name, let standing = try queries.standing(of: user, in: id) else {
                    throw Queries.failure(.spaceExists(id))
                }
                return standing.description(members: try queries.members(of: id))
            }
            try refuseFullUser(user, queries)
            let version = try queries.nextStamp(after: nil, in: id)
            try queries.insertSpace(id, name: name, owner: user, version: version)
            return try description(of: id, for: user, queries)
        }
        guard let standing = try queries.standing(of: user, in: id) else { throw Queries.failure(.noSuchSpace(id)) }
        switch change {
        case .create:
            return nil
        case .rename(_, let name):
            try requireOwner(standing, queries)
            try queries.updateSpace(id, name: name, version: try queries.nextStamp(after: nil, in: id))
        case .setMember(_, let member, let role):
            try requireOwner(standing, queries)
            guard isKnown(member) else { throw Queries.failure(.unknownUser(member)) }
            let members = try queries.members(of: id)
            if let current = members.first(where: { $0.user == member }) {
                if current.role == role { return standing.description(members: members) }
                if current.role == .owner { try refuseLastOwner(members, id, queries) }
            } else {
                if members.count >= ProtocolLimits.maximumMembersPerSpace {
                    throw Queries.failure(.tooMany(reason: "space \(id) has \(ProtocolLimits.maximumMembersPerSpace) members, the most a space may have"))
                }
                try refuseFullUser(member, queries)
            }
            try queries.setMember(id, user: member, role: role)
            try queries.updateSpace(id, name: standing.name, version: try queries.nextStamp(after: nil, in: id))
        case .removeMember(_, let member):
            if member != user { try requireOwner(standing, queries) }
            let members = try queries.members(of: id)
            guard let current = members.first(where: { $0.user == member }) else {
                // Not a member: nothing to remove, and the space is as it was.
                return standing.description(members: members)
            }
            if current.role == .owner { try refuseLastOwner(members, id, queries) }
            try queries.removeMember(id, user: member)
            try queries.updateSpace(id, name: standing.name, version: try queries.nextStamp(after: nil, in: id))
        case .leave:
            if standing.role == .owner { try refuseLastOwner(try queries.members(of: id), id, queries) }
            try queries.removeMember(id, user: user)
            try queries.updateSpace(id, name: standing.name, version: try queries.nextStamp(after: nil, in: id))
            return nil
        case .delete:
            try requireOwner(standing, queries)
            try queries.deleteSpace(id)
            return nil
        }
        return try description(of: id, for: user, queries)
    }

    /// Every shared space `user` is a member of, ordered by id, as `user` sees each.
    package static func spaces<Queries: StorageQueries>(of user: String, _ queries: Queries) throws(Queries.Failure) -> [Space] {
        var spaces: [Space] = []
        for standing in try queries.memberships(of: user) {
            spaces.append(standing.description(members: try queries.members(of: standing.space)))
        }
        return spaces
    }

    private static func description<Queries: MembershipQueries>(of id: SpaceID, for user: String,
                                                                _ queries: Queries) throws(Queries.Failure) -> Space? {
        guard let standing = try queries.standing(of: user, in: id) else { return nil }
        return standing.description(members: try queries.members(of: id))
    }

    private static func requireOwner<Queries: MembershipQueries>(_ standing: SpaceStanding, _ queries: Queries) throws(Queries.Failure) {
        guard standing.role.canManage else { throw Queries.failure(.forbidden(standing.space, role: standing.role)) }
    }

    /// Refuses to take the role from the one owner among `members`.
    private static func refuseLastOwner<Queries: MembershipQueries>(_ members: [SpaceMember], _ id: SpaceID,
                                                                    _ queries: Queries) throws(Queries.Failure) {
        if members.count(where: { $0.role == .owner }) <= 1 { throw Queries.failure(.lastOwner(id)) }
    }

    private static func refuseFullUser<Queries: MembershipQueries>(_ user: String, _ queries: Queries) throws(Queries.Failure) {
        if try queries.membershipCount(of: user) >= ProtocolLimits.maximumSpacesPerUser {
            throw Queries.failure(.tooMany(reason: "\(user) is a member of \(ProtocolLimits.maximumSpacesPerUser) spaces, the most a user may be"))
        }
    }
}
