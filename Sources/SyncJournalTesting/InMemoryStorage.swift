import SyncJournalProtocol

/// ``ReferenceServer``'s tables in memory: rows with their owners, shared
/// spaces with their members, the stamp clock and the tombstone horizons.
/// The shared push, pull and membership rules (`StorageRules`,
/// `SpaceRules`) query it as `sync-server`'s rules query SQLite, so the
/// reference server and `sync-server` decide alike.
///
/// Its failures are transport errors: a refused pull or membership change
/// reaches the client as the in-process transport reports it. Its own
/// statements never fail.
final class InMemoryStorage: StorageQueries, MembershipQueries {
    /// How a refused request reaches the client (see ``failure(_:)``).
    typealias Failure = TransportError

    /// Every stored row, live or a tombstone, with its owner.
    private var table: [RowAddress: OwnedRow] = [:]
    /// Per personal key, the users holding a row under it (for the readers
    /// that name no user: another writer, an inspection).
    private var personalOwners: [RecordKey: [String]] = [:]
    /// Where the last row read lies in `table`: the rules read a row and then
    /// write the same row, and the write goes there without hashing the key
    /// again. Forgotten whenever a row is added or removed (that may move rows).
    private var lastRead: (address: RowAddress, index: Dictionary<RowAddress, OwnedRow>.Index)?
    /// The server's clock: the smallest stamp the next write can get.
    private(set) var clock: Int64
    private var lastIssued: Int64 = .min
    /// The largest stamp a pull has handed out (or a horizon it moved a
    /// client to): later writes go above it, so a row never appears behind a
    /// cursor a client already holds.
    private var sealed: Int64 = .min
    /// Per kind, the position of the last personal tombstone purged: a cursor before it missed a deletion.
    private(set) var horizons: [String: PullCursor] = [:]
    /// The shared spaces.
    private var spaces: [SpaceID: InMemorySpace] = [:]
    /// Rows the rules wrote through ``write(_:owner:createdBy:)``: each is one applied mutation.
    private(set) var ruleWrites = 0
    /// The attachment contents, uploaders and unfinished uploads.
    var attachments = InMemoryAttachments()
    /// Per content, the live rows referring to it (kept with every row stored or removed).
    private var references: [ContentHash: Set<RowAddress>] = [:]
    /// Per row, the contents it refers to (to forget them when it changes).
    private var referencesOf: [RowAddress: Set<ContentHash>] = [:]

    /// Empty tables whose clock starts at `clock`.
    init(clock: Int64) {
        self.clock = clock
    }

    /// A copy of `tables` whose clock stands at `clock`.
    init(_ tables: InMemoryTables, clock: Int64) {
        self.clock = clock
        table = tables.table
        lastIssued = tables.lastIssued
        sealed = tables.sealed
        horizons = tables.horizons
        spaces = tables.spaces
        attachments = tables.attachments
        for address in table.keys where address.key.space.isPersonal { personalOwners[address.key, default: []].append(address.owner) }
        for (address, stored) in table { noteReferences(of: stored.row, at: address) }
    }

    /// The rows, spaces, stamp counter and horizons as a value (what a backup copies).
    var tables: InMemoryTables {
        InMemoryTables(table: table, lastIssued: lastIssued, sealed: sealed, horizons: horizons, spaces: spaces, attachments: attachments)
    }

    /// The largest stamp this storage ever issued or handed out (as a row,
    /// a cursor or a horizon), 0 when none: never less than a stamp any
    /// client pulled from it, and it never goes down (purged tombstones
    /// included).
    var latestStamp: Int64 { max(0, lastIssued, sealed) }

    /// Advances the clock; until then, personal writes to different rows share a stamp.
    func advanceClock(by milliseconds: Int64) { clock += max(0, milliseconds) }

    // MARK: The rules' queries

    /// The row stored under `key` for `owner`, live or a tombstone.
    func row(_ key: RecordKey, owner: String) -> OwnedRow? {
        let address = RowAddress(key: key, owner: owner)
        guard let index = table.index(forKey: address) else {
            lastRead = nil
            return nil
        }
        lastRead = (address, index)
        return table.values[index]
    }

    /// Stores a row for the rules (and counts it as an applied mutation).
    func write(_ row: ServerRow, owner: String, createdBy: String?) {
        store(row, owner: owner, createdBy: createdBy)
        ruleWrites += 1
    }

    /// Up to `limit` rows of `kind` in `space` held by `owner` after `cursor`, in `(updatedAt, id)` order.
    func rows(in space: SpaceID, owner: String, kind: String, after cursor: PullCursor?, limit: Int) -> [ServerRow] {
        let rows = table.values
            .filter { $0.owner == owner && $0.row.kind == kind && $0.row.space == space }
            .map(\.row)
            .filter { row in cursor.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
            .sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
        return Array(rows.prefix(limit))
    }

    /// The clock's stamp, unless a larger one is needed: above the row's
    /// `previous` stamp, above anything a pull handed out, never below a
    /// stamp issued before, and in a shared space above its last stamp.
    /// Personal rows written between two pulls may share a stamp (the
    /// `(updatedAt, id)` cursor handles the tie); a shared space's never do.
    func nextStamp(after previous: Int64?, in space: SpaceID) -> Int64 {
        var value = max(clock, lastIssued)
        if sealed != .min { value = max(value, sealed + 1) }
        if let previous { value = max(value, previous + 1) }
        if let last = spaces[space]?.lastStamp {
            value = max(value, last + 1)
            spaces[space]?.lastStamp = value
        }
        lastIssued = value
        return value
    }

    /// The position of the last tombstone of `kind` purged in `space`, if any.
    func horizon(kind: String, in space: SpaceID) -> PullCursor? {
        space.isPersonal ? horizons[kind] : spaces[space]?.horizons[kind]
    }

    /// `user`'s role in `space`, `nil` when not a member.
    func role(of user: String, in space: SpaceID) -> SpaceRole? { spaces[space]?.members[user] }

    /// Every space `user` is a member of, by id.
    func memberships(of user: String) -> [SpaceStanding] {
        spaces.compactMap { id, space in
            space.members[user].map { SpaceStanding(space: id, name: space.name, role: $0, version: space.version, lastStamp: space.lastStamp) }
        }.sorted { $0.space < $1.space }
    }

    /// The members of `space`.
    func members(of space: SpaceID) -> [SpaceMember] {
        (spaces[space]?.members ?? [:]).map { SpaceMember(user: $0.key, role: $0.value) }
    }

    /// A refused pull as the in-process transport reports it: an expired
    /// cursor asks for a resync, anything else is permanent.
    static func failure(_ refusal: PullRefusal) -> TransportError {
        switch refusal {
        case .cursorExpired(let kinds, let spaceKinds): return .cursorExpired(kinds: PullRefusal.expiredKinds(kinds, spaceKinds))
        case .badRequest, .badCursor: return .permanent(reason: refusal.description)
        }
    }

    // MARK: The membership rules' queries

    /// `user`'s standing in `space`, `nil` when not a member.
    func standing(of user: String, in space: SpaceID) -> SpaceStanding? {
        guard let stored = spaces[space], let role = stored.members[user] else { return nil }
        return SpaceStanding(space: space, name: stored.name, role: role, version: stored.version, lastStamp: stored.lastStamp)
    }

    /// The name of `space` and whether `user` owns it.
    func existingSpace(_ space: SpaceID, owner user: String) -> (name: String, ownedByUser: Bool)? {
        spaces[space].map { ($0.name, $0.members[user] == .owner) }
    }

    /// How many spaces `user` is a member of.
    func membershipCount(of user: String) -> Int { spaces.values.count { $0.members[user] != nil } }

    /// Makes a space with one owner.
    func insertSpace(_ space: SpaceID, name: String, owner: String, version: Int64) {
        spaces[space] = InMemorySpace(name: name, version: version, lastStamp: version, members: [owner: .owner])
    }

    /// Sets a space's name and version.
    func updateSpace(_ space: SpaceID, name: String, version: Int64) {
        spaces[space]?.name = name
        spaces[space]?.version = version
    }

    /// Adds a member or changes its role.
    func setMember(_ space: SpaceID, user: String, role: SpaceRole) { spaces[space]?.members[user] = role }

    /// Removes a member.
    func removeMember(_ space: SpaceID, user: String) { spaces[space]?.members[user] = nil }

    /// Removes a space and every row in it.
    func deleteSpace(_ space: SpaceID) {
        spaces[space] = nil
        lastRead = nil
        for address in referencesOf.keys where address.key.space == space { forgetReferences(at: address) }
        table = table.filter { $0.key.key.space != space }
    }

    /// A refused membership change as the in-process transport reports it.
    static func failure(_ refusal: SpaceRefusal) -> TransportError { .spaceRefused(refusal) }

    // MARK: Beyond the rules

    /// Stores a row as another writer would (not an applied mutation).
    func store(_ row: ServerRow, owner: String, createdBy: String? = nil) {
        let address = RowAddress(key: row.key, owner: owner)
        forgetReferences(at: address)
        noteReferences(of: row, at: address)
        if let lastRead, lastRead.address == address {
            // Replacing a value in place moves no row: the index stays valid.
            table.values[lastRead.index] = OwnedRow(row: row, owner: owner, createdBy: createdBy)
            return
        }
        lastRead = nil
        if table.updateValue(OwnedRow(row: row, owner: owner, createdBy: createdBy), forKey: address) == nil, row.space.isPersonal {
            personalOwners[row.key, default: []].append(owner)
        }
    }

    /// Removes the personal rows under `kind` and `id` of every user but `user`.
    func removePersonalRows(kind: String, id: String, except user: String) {
        let key = RecordKey(kind: kind, id: id)
        for owner in personalOwners[key] ?? [] where owner != user {
            table[RowAddress(key: key, owner: owner)] = nil
            forgetReferences(at: RowAddress(key: key, owner: owner))
            lastRead = nil
        }
        personalOwners[key]?.removeAll { $0 != user }
        if personalOwners[key]?.isEmpty == true { personalOwners[key] = nil }
    }

    /// The users holding a personal row under `kind` and `id`, in the order they made them.
    func personalOwners(kind: String, id: String) -> [String] { personalOwners[RecordKey(kind: kind, id: id)] ?? [] }

    /// Every stored row, live or a tombstone.
    var storedRows: Dictionary<RowAddress, OwnedRow>.Values { table.values }

    /// Notes that a pull handed out `page`: later writes stamp above every
    /// row in it and every cursor it gave.
    func seal(_ page: PullPage) {
        for row in page.rows { sealed = max(sealed, row.updatedAt) }
        for cursor in page.nextCursors.values { sealed = max(sealed, cursor.updatedAt) }
        for cursors in page.nextSpaceCursors.values {
            for cursor in cursors.values { sealed = max(sealed, cursor.updatedAt) }
        }
    }

    /// Forgets tombstones stamped before `stamp` (of `kind`, or of every
    /// kind) and moves each space's horizon of the kind to the last one purged.
    ///
    /// - Returns: the number of tombstones purged.
    func purgeTombstones(olderThan stamp: Int64, kind: String?) -> Int {
        let purged = table.filter { address, stored in
            stored.row.isTombstone && stored.row.updatedAt < stamp && (kind == nil || address.key.kind == kind)
        }
        if !purged.isEmpty { lastRead = nil }
        for (address, stored) in purged {
            table[address] = nil
            if address.key.space.isPersonal {
                personalOwners[address.key]?.removeAll { $0 == address.owner }
                if personalOwners[address.key]?.isEmpty == true { personalOwners[address.key] = nil }
            }
            let position = PullCursor(updatedAt: stored.row.updatedAt, id: stored.row.id)
            // Later writes must sort after the horizon, or a client moved to it would skip them.
            sealed = max(sealed, stored.row.updatedAt)
            let space = address.key.space
            if space.isPersonal {
                if horizons[address.key.kind].map({ $0 < position }) ?? true { horizons[address.key.kind] = position }
            } else if spaces[space]?.horizons[address.key.kind].map({ $0 < position }) ?? true {
                spaces[space]?.horizons[address.key.kind] = position
            }
        }
        return purged.count
    }

    // MARK: References

    /// Records the contents a live row refers to (a tombstone refers to nothing).
    private func noteReferences(of row: ServerRow, at address: RowAddress) {
        guard !row.isTombstone, row.fields.values.contains(where: \.holdsAttachment) else { return }
        let contents = Set(AttachmentRules.contents(of: row.fields))
        referencesOf[address] = contents
        for content in contents { references[content, default: []].insert(address) }
    }

    /// Forgets the contents the row at `address` referred to.
    private func forgetReferences(at address: RowAddress) {
        guard let contents = referencesOf.removeValue(forKey: address) else { return }
        for content in contents {
            references[content]?.remove(address)
            if references[content]?.isEmpty == true { references[content] = nil }
        }
    }

    /// Whether any live row refers to `content`.
    func isReferenced(_ content: ContentHash) -> Bool { references[content] != nil }
}

extension InMemoryStorage: AttachmentQueries {
    func storedSize(of content: ContentHash) -> Int64? { attachments.stored[content].map { Int64($0.bytes.count) } }

    func hasUploaded(_ content: ContentHash, user: String) -> Bool { attachments.uploaders[content]?.contains(user) ?? false }

    func isReferenced(_ content: ContentHash, byRowVisibleTo user: String) -> Bool {
        references[content]?.contains { address in
            address.key.space.isPersonal ? address.owner == user : spaces[address.key.space]?.members[user] != nil
        } ?? false
    }

    func unfinishedUpload(of content: ContentHash, user: String) -> UnfinishedUpload? {
        attachments.uploads[InMemoryAttachments.UploadKey(user: user, content: content)].map {
            UnfinishedUpload(size: $0.size, received: Int64($0.bytes.count))
        }
    }

    func attachmentBytesCharged(to user: String) -> Int64 {
        let stored = attachments.uploaders.reduce(Int64(0)) { total, entry in
            entry.value.contains(user) ? total + (storedSize(of: entry.key) ?? 0) : total
        }
        return attachments.uploads.reduce(stored) { total, entry in entry.key.user == user ? total + entry.value.size : total }
    }

    func mayRead(_ content: ContentHash, user: String) throws(TransportError) -> Bool {
        try AttachmentRules.readableSize(of: content, user: user, self) != nil
    }
}
