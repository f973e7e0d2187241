import SyncJournalProtocol
import SyncJournalWire

/// The attachment statements of ``SQLiteStorage`` (journals/PROTOCOL.md,
/// "Attachments"; the tables in ``StorageSchema``): what the shared
/// `AttachmentRules` query, and the writes that follow their decisions.
extension StorageTransaction: AttachmentQueries {
    func storedSize(of content: ContentHash) throws(StorageError) -> Int64? {
        try integer("select size from attachment_contents where hash = ?1", .text(content.hex))
    }

    func hasUploaded(_ content: ContentHash, user: String) throws(StorageError) -> Bool {
        try integer("select 1 from attachment_uploaders where owner = ?1 and hash = ?2", .text(user), .text(content.hex)) != nil
    }

    func isReferenced(_ content: ContentHash, byRowVisibleTo user: String) throws(StorageError) -> Bool {
        try integer("""
            select 1 from attachment_references r
            where r.hash = ?1 and ((r.space = '' and r.owner = ?2)
              or (r.space <> '' and exists (select 1 from space_members m where m.space = r.space and m.member = ?2)))
            limit 1
            """, .text(content.hex), .text(user)) != nil
    }

    func unfinishedUpload(of content: ContentHash, user: String) throws(StorageError) -> UnfinishedUpload? {
        try sql { () throws(SQLiteError) -> UnfinishedUpload? in
            try database.withStatement("select size, received from attachment_uploads where owner = ?1 and hash = ?2") { statement throws(SQLiteError) in
                statement.bind(1, user)
                statement.bind(2, content.hex)
                guard try statement.step() else { return nil }
                return UnfinishedUpload(size: statement.int64(0), received: statement.int64(1))
            }
        }
    }

    func attachmentBytesCharged(to user: String) throws(StorageError) -> Int64 {
        try integer("""
            select coalesce((select sum(c.size) from attachment_uploaders u join attachment_contents c on c.hash = u.hash where u.owner = ?1), 0)
                 + coalesce((select sum(size) from attachment_uploads where owner = ?1), 0)
            """, .text(user)) ?? 0
    }

    func mayRead(_ content: ContentHash, user: String) throws(StorageError) -> Bool {
        try AttachmentRules.readableSize(of: content, user: user, self) != nil
    }

    /// Replaces the references of one row with the contents its `fields`
    /// refer to (`nil`: a tombstone, which refers to nothing).
    func writeReferences(space: SpaceID, kind: String, id: String, owner: String, fields: [UInt8]?) throws(StorageError) {
        let contents = fields.map { EncodedFields.contents(inList: $0) } ?? []
        let column = Self.column(space)
        try execute("delete from attachment_references where space = ?1 and owner = ?2 and kind = ?3 and id = ?4",
                    .text(column), .text(owner), .text(kind), .text(id))
        for content in Set(contents) {
            try execute("insert into attachment_references (space, owner, kind, id, hash) values (?1, ?2, ?3, ?4, ?5)",
                        .text(column), .text(owner), .text(kind), .text(id), .text(content.hex))
        }
    }

    // MARK: Uploads

    /// Starts `user`'s upload of `content` (declared `size`) with nothing
    /// received, replacing one that declared another size.
    func startUpload(user: String, content: ContentHash, size: Int64) throws(StorageError) {
        try execute("""
            insert into attachment_uploads (owner, hash, size, received, touched_at) values (?1, ?2, ?3, 0, ?4)
            on conflict (owner, hash) do update set size = excluded.size, received = 0, touched_at = excluded.touched_at
            """, .text(user), .text(content.hex), .integer(size), .integer(now()))
    }

    /// Records that `user`'s upload went from `from` to `to` bytes, if it
    /// still stood at `from` (a collection may have removed it meanwhile).
    func advanceUpload(user: String, content: ContentHash, from: Int64, to: Int64) throws(StorageError) -> Bool {
        try execute("update attachment_uploads set received = ?4, touched_at = ?5 where owner = ?1 and hash = ?2 and received = ?3",
                    .text(user), .text(content.hex), .integer(from), .integer(to), .integer(now()))
        return database.changes > 0
    }

    /// Forgets `user`'s unfinished upload of `content`.
    func removeUpload(user: String, content: ContentHash) throws(StorageError) {
        try execute("delete from attachment_uploads where owner = ?1 and hash = ?2", .text(user), .text(content.hex))
    }

    /// Records `content` as held whole and uploaded by `user` now (the
    /// upload's date keeps it from collection for the grace period), and
    /// forgets the upload. Returns whether the content was new.
    func storeContent(_ content: ContentHash, size: Int64, uploadedBy user: String) throws(StorageError) -> Bool {
        let existed = try storedSize(of: content) != nil
        try execute("""
            insert into attachment_contents (hash, size, stored_at) values (?1, ?2, ?3)
            on conflict (hash) do update set stored_at = excluded.stored_at
            """, .text(content.hex), .integer(size), .integer(now()))
        try execute("insert or ignore into attachment_uploaders (owner, hash) values (?1, ?2)", .text(user), .text(content.hex))
        try removeUpload(user: user, content: content)
        return !existed
    }

    /// Every unfinished upload, with what the database says arrived.
    func unfinishedUploads() throws(StorageError) -> [(user: String, content: ContentHash, received: Int64)] {
        try sql { () throws(SQLiteError) -> [(user: String, content: ContentHash, received: Int64)] in
            try database.withStatement("select owner, hash, received from attachment_uploads") { statement throws(SQLiteError) in
                var found: [(user: String, content: ContentHash, received: Int64)] = []
                while try statement.step() {
                    if let content = ContentHash(statement.text(1)) { found.append((statement.text(0), content, statement.int64(2))) }
                }
                return found
            }
        }
    }

    /// Every content held whole.
    func storedContents() throws(StorageError) -> Set<ContentHash> {
        try sql { () throws(SQLiteError) -> Set<ContentHash> in
            try database.withStatement("select hash from attachment_contents") { statement throws(SQLiteError) in
                var found = Set<ContentHash>()
                while try statement.step() { if let content = ContentHash(statement.text(0)) { found.insert(content) } }
                return found
            }
        }
    }

    /// Forgets a content held whole and who uploaded it (its file is gone).
    func forgetContent(_ content: ContentHash) throws(StorageError) {
        try execute("delete from attachment_uploaders where hash = ?1", .text(content.hex))
        try execute("delete from attachment_contents where hash = ?1", .text(content.hex))
    }

    // MARK: Collection

    /// Removes the unfinished uploads untouched since `cutoff` (but those
    /// in `busy`, being written now) and returns them.
    func removeStaleUploads(before cutoff: Int64, except busy: Set<UploadKey>) throws(StorageError) -> [UploadKey] {
        let stale = try sql { () throws(SQLiteError) -> [UploadKey] in
            try database.withStatement("select owner, hash from attachment_uploads where touched_at < ?1") { statement throws(SQLiteError) in
                statement.bind(1, cutoff)
                var found: [UploadKey] = []
                while try statement.step() {
                    if let content = ContentHash(statement.text(1)) { found.append(UploadKey(user: statement.text(0), content: content)) }
                }
                return found
            }
        }.filter { !busy.contains($0) }
        for key in stale { try removeUpload(user: key.user, content: key.content) }
        return stale
    }

    /// Removes the contents no live row refers to, last uploaded before
    /// `cutoff`, with no unfinished upload of them, and who uploaded them;
    /// returns them (their files go after the commit).
    func removeUnreferencedContents(before cutoff: Int64) throws(StorageError) -> [ContentHash] {
        let unreferenced = try sql { () throws(SQLiteError) -> [ContentHash] in
            try database.withStatement("""
                select hash from attachment_contents c where stored_at < ?1
                  and not exists (select 1 from attachment_references r where r.hash = c.hash)
                  and not exists (select 1 from attachment_uploads u where u.hash = c.hash)
                """) { statement throws(SQLiteError) in
                statement.bind(1, cutoff)
                var found: [ContentHash] = []
                while try statement.step() { if let content = ContentHash(statement.text(0)) { found.append(content) } }
                return found
            }
        }
        for content in unreferenced { try forgetContent(content) }
        return unreferenced
    }

    /// The one integer the query answers, `nil` for no row.
    private func integer(_ query: String, _ parameters: Parameter...) throws(StorageError) -> Int64? {
        try sql { () throws(SQLiteError) -> Int64? in
            try database.withStatement(query) { statement throws(SQLiteError) in
                for (index, parameter) in parameters.enumerated() {
                    switch parameter {
                    case .text(let text): statement.bind(Int32(index + 1), text)
                    case .integer(let value): statement.bind(Int32(index + 1), value)
                    }
                }
                return try statement.step() ? statement.int64(0) : nil
            }
        }
    }
}

/// Names one user's upload of one content.
struct UploadKey: Sendable, Hashable {
    /// Who uploads.
    let user: String
    /// What.
    let content: ContentHash
}
