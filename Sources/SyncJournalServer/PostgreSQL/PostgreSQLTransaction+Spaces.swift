import SyncJournalProtocol

/// PostgreSQL's statements on shared spaces and their members, as the pull,
/// push and membership rules use them. A space's row in `spaces` is its
/// stamp counter: whatever writes into the space (a push, a membership
/// change, a purge) locks it first, so the space's stamps follow its commits.
extension PostgreSQLTransaction: MembershipQueries {
    private func execute(_ sql: String, _ parameters: [PostgreSQLValue] = []) throws(StorageError) -> PostgreSQLRows {
        do throws(PostgreSQLError) { return try connection.execute(sql, parameters) } catch { throw .postgres(error) }
    }

    private func decoded<T>(_ work: () throws(PostgreSQLError) -> T, table: String, key: String) throws(StorageError) -> T {
        do throws(PostgreSQLError) { return try work() } catch { throw .corrupt(table: table, key: key, reason: error.message) }
    }

    private static let standingColumns = "s.id, s.name, s.version, s.last, m.role"

    private func standings(_ found: PostgreSQLRows) throws(StorageError) -> [SpaceStanding] {
        var standings: [SpaceStanding] = []
        standings.reserveCapacity(found.count)
        for index in 0..<found.count {
            let (id, name, version, last, role) = try decoded({ () throws(PostgreSQLError) in
                (try found.text(index, 0), try found.text(index, 1), try found.int64(index, 2), try found.int64(index, 3), try found.text(index, 4))
            }, table: "space_members", key: "membership \(index)")
            guard let space = SpaceID(id), let role = SpaceRole(rawValue: role) else {
                throw .corrupt(table: "space_members", key: String(id.prefix(80)), reason: "\"\(role.prefix(20))\" in no space or no role")
            }
            standings.append(SpaceStanding(space: space, name: name, role: role, version: version, lastStamp: last))
        }
        return standings
    }

    /// Locks the counters of `spaces` in id order (nonexistent ones are
    /// skipped) and reads each one's last stamp and `user`'s role in it
    /// (`nil`: not a member), after the lock: a membership change that
    /// committed before is seen, one after waits for this transaction.
    func lockSpaces(_ spaces: [SpaceID], user: String) throws(StorageError) -> [SpaceID: (last: Int64, role: SpaceRole?)] {
        guard !spaces.isEmpty else { return [:] }
        let ids = spaces.sorted(by: <).map { StorageTransaction.column($0) }
        let locked = try execute("select id, last from spaces where id = any($1::text[]) order by id for update", [.textArray(ids)])
        let roles = try execute("select space, role from space_members where space = any($1::text[]) and member = $2",
                                [.textArray(ids), .text(user)])
        var found: [SpaceID: (last: Int64, role: SpaceRole?)] = [:]
        for index in 0..<locked.count {
            let (id, last) = try decoded({ () throws(PostgreSQLError) in (try locked.text(index, 0), try locked.int64(index, 1)) },
                                         table: "spaces", key: "locked \(index)")
            found[try StorageTransaction.space(id, table: "spaces", key: id)] = (last, nil)
        }
        for index in 0..<roles.count {
            let (id, role) = try decoded({ () throws(PostgreSQLError) in (try roles.text(index, 0), try roles.text(index, 1)) },
                                         table: "space_members", key: "role \(index)")
            let space = try StorageTransaction.space(id, table: "space_members", key: id)
            found[space]?.role = SpaceRole(rawValue: role)
        }
        return found
    }

    /// Serialises creates of one space id until the transaction ends (a
    /// space that does not exist yet has no row to lock).
    func lockSpaceCreation(_ space: SpaceID) throws(StorageError) {
        _ = try execute("select pg_advisory_xact_lock(hashtextextended($1, 0))", [.text(StorageTransaction.column(space))])
    }

    func role(of user: String, in space: SpaceID) throws(StorageError) -> SpaceRole? {
        try standing(of: user, in: space)?.role
    }

    func standing(of user: String, in space: SpaceID) throws(StorageError) -> SpaceStanding? {
        guard !space.isPersonal else { return nil }
        return try standings(try execute("""
            select \(Self.standingColumns) from space_members m join spaces s on s.id = m.space where m.space = $1 and m.member = $2
            """, [.text(StorageTransaction.column(space)), .text(user)])).first
    }

    /// One indexed read (`space_members_by_member`) for every membership, with each space's last stamp.
    func memberships(of user: String) throws(StorageError) -> [SpaceStanding] {
        try standings(try execute("""
            select \(Self.standingColumns) from space_members m join spaces s on s.id = m.space where m.member = $1 order by m.space
            """, [.text(user)]))
    }

    func members(of space: SpaceID) throws(StorageError) -> [SpaceMember] {
        let found = try execute("select member, role from space_members where space = $1", [.text(StorageTransaction.column(space))])
        var members: [SpaceMember] = []
        for index in 0..<found.count {
            let (user, role) = try decoded({ () throws(PostgreSQLError) in (try found.text(index, 0), try found.text(index, 1)) },
                                           table: "space_members", key: "\(space)/\(index)")
            guard let role = SpaceRole(rawValue: role) else {
                throw .corrupt(table: "space_members", key: "\(space)/\(user)", reason: "\"\(role.prefix(20))\" is no role")
            }
            members.append(SpaceMember(user: user, role: role))
        }
        return members
    }

    func existingSpace(_ space: SpaceID, owner user: String) throws(StorageError) -> (name: String, ownedByUser: Bool)? {
        let found = try execute("""
            select name, case when exists (select 1 from space_members where space = $1 and member = $2 and role = 'owner') then 1::int8 else 0::int8 end
            from spaces where id = $1
            """, [.text(StorageTransaction.column(space)), .text(user)])
        guard found.count > 0 else { return nil }
        return try decoded({ () throws(PostgreSQLError) in (try found.text(0, 0), try found.int64(0, 1) == 1) }, table: "spaces", key: "\(space)")
    }

    func membershipCount(of user: String) throws(StorageError) -> Int {
        let found = try execute("select count(*)::int8 from space_members where member = $1", [.text(user)])
        return Int(try decoded({ () throws(PostgreSQLError) in try found.int64(0, 0) }, table: "space_members", key: user))
    }

    func insertSpace(_ space: SpaceID, name: String, owner: String, version: Int64) throws(StorageError) {
        _ = try execute("insert into spaces (id, name, version, last) values ($1, $2, $3, $3)",
                        [.text(StorageTransaction.column(space)), .text(name), .int64(version)])
        try setMember(space, user: owner, role: .owner)
    }

    func updateSpace(_ space: SpaceID, name: String, version: Int64) throws(StorageError) {
        _ = try execute("update spaces set name = $2, version = $3, last = greatest(last, $3) where id = $1",
                        [.text(StorageTransaction.column(space)), .text(name), .int64(version)])
    }

    func setMember(_ space: SpaceID, user: String, role: SpaceRole) throws(StorageError) {
        _ = try execute("""
            insert into space_members (space, member, role) values ($1, $2, $3) on conflict (space, member) do update set role = excluded.role
            """, [.text(StorageTransaction.column(space)), .text(user), .text(role.rawValue)])
    }

    func removeMember(_ space: SpaceID, user: String) throws(StorageError) {
        _ = try execute("delete from space_members where space = $1 and member = $2", [.text(StorageTransaction.column(space)), .text(user)])
    }

    /// Removes the space, its members, its rows and its horizons (no tombstones: nobody can pull them again).
    func deleteSpace(_ space: SpaceID) throws(StorageError) {
        let id = PostgreSQLValue.text(StorageTransaction.column(space))
        _ = try execute("delete from rows where space = $1", [id])
        _ = try execute("delete from attachment_references where space = $1", [id])
        _ = try execute("delete from space_horizons where space = $1", [id])
        _ = try execute("delete from space_members where space = $1", [id])
        _ = try execute("delete from spaces where id = $1", [id])
    }

    /// The stamp of a membership change: `max(now, last + 1)` from the
    /// space's counter (locked by ``lockSpaces(_:user:)`` first), or `now`
    /// for a space being created.
    func nextStamp(after previous: Int64?, in space: SpaceID) throws(StorageError) -> Int64 {
        let clock: PostgreSQLValue = .int64(now?())
        let found = try execute("""
            select greatest(coalesce($2::int8, (extract(epoch from clock_timestamp()) * 1000)::bigint),
                            coalesce((select last + 1 from spaces where id = $1), 0), coalesce($3::int8 + 1, 0))
            """, [.text(StorageTransaction.column(space)), clock, .int64(previous)])
        return try decoded({ () throws(PostgreSQLError) in try found.int64(0, 0) }, table: "spaces", key: "\(space)")
    }

    /// A refused membership change as the HTTP reply reports it.
    static func failure(_ refusal: SpaceRefusal) -> StorageError { .spaceRefused(refusal) }

    // MARK: Horizons of shared spaces

    func spaceHorizon(_ space: SpaceID, kind: String) throws(StorageError) -> PullCursor? {
        let found = try execute("select updated_at, id from space_horizons where space = $1 and kind = $2",
                                [.text(StorageTransaction.column(space)), .text(kind)])
        guard found.count > 0 else { return nil }
        return try decoded({ () throws(PostgreSQLError) in PullCursor(updatedAt: try found.int64(0, 0), id: try found.text(0, 1)) },
                           table: "space_horizons", key: "\(space)/\(kind)")
    }

    func raiseSpaceHorizon(_ space: String, kind: String, to position: PullCursor) throws(StorageError) {
        _ = try execute("""
            insert into space_horizons (space, kind, updated_at, id) values ($1, $2, $3, $4)
            on conflict (space, kind) do update set updated_at = excluded.updated_at, id = excluded.id
            where (space_horizons.updated_at, space_horizons.id) < (excluded.updated_at, excluded.id)
            """, [.text(space), .text(kind), .int64(position.updatedAt), .text(position.id)])
    }
}
