import SyncJournalProtocol

/// SQLite's statements on shared spaces and their members, as the pull,
/// push and membership rules use them.
extension StorageTransaction: MembershipQueries {
    /// A membership as read: the space's id, name, version and last stamp, and the member's role.
    private typealias StoredStanding = (id: String, name: String, version: Int64, last: Int64, role: String)

    private static let standingColumns = "s.id, s.name, s.version, s.last, m.role"

    private static func read(_ statement: SQLiteStatement) -> StoredStanding {
        (statement.text(0), statement.text(1), statement.int64(2), statement.int64(3), statement.text(4))
    }

    private static func standing(_ stored: StoredStanding) throws(StorageError) -> SpaceStanding {
        guard let space = SpaceID(stored.id), let role = SpaceRole(rawValue: stored.role) else {
            throw .corrupt(table: "space_members", key: String(stored.id.prefix(80)), reason: "\"\(stored.role.prefix(20))\" in no space or no role")
        }
        return SpaceStanding(space: space, name: stored.name, role: role, version: stored.version, lastStamp: stored.last)
    }

    func role(of user: String, in space: SpaceID) throws(StorageError) -> SpaceRole? {
        try standing(of: user, in: space)?.role
    }

    func standing(of user: String, in space: SpaceID) throws(StorageError) -> SpaceStanding? {
        guard !space.isPersonal else { return nil }
        let stored: StoredStanding? = try sql { () throws(SQLiteError) in
            try database.withStatement("""
                select \(Self.standingColumns) from space_members m join spaces s on s.id = m.space where m.space = ?1 and m.member = ?2
                """) { statement throws(SQLiteError) in
                statement.bind(1, Self.column(space))
                statement.bind(2, user)
                return try statement.step() ? Self.read(statement) : nil
            }
        }
        guard let stored else { return nil }
        return try Self.standing(stored)
    }

    /// One indexed read (`space_members_by_member`) for every membership, with each space's last stamp.
    func memberships(of user: String) throws(StorageError) -> [SpaceStanding] {
        let found: [StoredStanding] = try sql { () throws(SQLiteError) in
            try database.withStatement("""
                select \(Self.standingColumns) from space_members m join spaces s on s.id = m.space where m.member = ?1 order by m.space
                """) { statement throws(SQLiteError) in
                statement.bind(1, user)
                var found: [StoredStanding] = []
                while try statement.step() { found.append(Self.read(statement)) }
                return found
            }
        }
        var standings: [SpaceStanding] = []
        standings.reserveCapacity(found.count)
        for stored in found { standings.append(try Self.standing(stored)) }
        return standings
    }

    func members(of space: SpaceID) throws(StorageError) -> [SpaceMember] {
        let found: [(String, String)] = try sql { () throws(SQLiteError) in
            try database.withStatement("select member, role from space_members where space = ?1") { statement throws(SQLiteError) in
                statement.bind(1, Self.column(space))
                var found: [(String, String)] = []
                while try statement.step() { found.append((statement.text(0), statement.text(1))) }
                return found
            }
        }
        var members: [SpaceMember] = []
        for (user, role) in found {
            guard let role = SpaceRole(rawValue: role) else {
                throw .corrupt(table: "space_members", key: "\(space)/\(user)", reason: "\"\(role.prefix(20))\" is no role")
            }
            members.append(SpaceMember(user: user, role: role))
        }
        return members
    }

    func existingSpace(_ space: SpaceID, owner user: String) throws(StorageError) -> (name: String, ownedByUser: Bool)? {
        try sql { () throws(SQLiteError) in
            try database.withStatement("""
                select name, exists (select 1 from space_members where space = ?1 and member = ?2 and role = 'owner') from spaces where id = ?1
                """) { statement throws(SQLiteError) in
                statement.bind(1, Self.column(space))
                statement.bind(2, user)
                return try statement.step() ? (statement.text(0), statement.int64(1) == 1) : nil
            }
        }
    }

    func membershipCount(of user: String) throws(StorageError) -> Int {
        try sql { () throws(SQLiteError) in
            try database.withStatement("select count(*) from space_members where member = ?1") { statement throws(SQLiteError) in
                statement.bind(1, user)
                return try statement.step() ? Int(statement.int64(0)) : 0
            }
        }
    }

    func insertSpace(_ space: SpaceID, name: String, owner: String, version: Int64) throws(StorageError) {
        try execute("insert into spaces (id, name, version, last) values (?1, ?2, ?3, ?3)", .text(Self.column(space)), .text(name), .integer(version))
        try setMember(space, user: owner, role: .owner)
    }

    func updateSpace(_ space: SpaceID, name: String, version: Int64) throws(StorageError) {
        try execute("update spaces set name = ?2, version = ?3, last = max(last, ?3) where id = ?1",
                    .text(Self.column(space)), .text(name), .integer(version))
    }

    func setMember(_ space: SpaceID, user: String, role: SpaceRole) throws(StorageError) {
        try execute("""
            insert into space_members (space, member, role) values (?1, ?2, ?3) on conflict (space, member) do update set role = excluded.role
            """, .text(Self.column(space)), .text(user), .text(role.rawValue))
    }

    func removeMember(_ space: SpaceID, user: String) throws(StorageError) {
        try execute("delete from space_members where space = ?1 and member = ?2", .text(Self.column(space)), .text(user))
    }

    /// Removes the space, its members, its rows and its horizons (no tombstones: nobody can pull them again).
    func deleteSpace(_ space: SpaceID) throws(StorageError) {
        let id = Self.column(space)
        try execute("delete from rows where space = ?1", .text(id))
        try execute("delete from attachment_references where space = ?1", .text(id))
        try execute("delete from horizons where space = ?1", .text(id))
        try execute("delete from space_members where space = ?1", .text(id))
        try execute("delete from spaces where id = ?1", .text(id))
    }

    /// A refused membership change as the HTTP reply reports it.
    static func failure(_ refusal: SpaceRefusal) -> StorageError { .spaceRefused(refusal) }

    /// A bound value of ``execute(_:_:)``.
    enum Parameter {
        case text(String)
        case integer(Int64)
    }

    /// Runs one statement that returns no rows, its parameters bound in order.
    func execute(_ sql: String, _ parameters: Parameter...) throws(StorageError) {
        try self.sql { () throws(SQLiteError) in
            try database.withStatement(sql) { statement throws(SQLiteError) in
                for (index, parameter) in parameters.enumerated() {
                    switch parameter {
                    case .text(let text): statement.bind(Int32(index + 1), text)
                    case .integer(let value): statement.bind(Int32(index + 1), value)
                    }
                }
                _ = try statement.step()
            }
        }
    }
}
