import SyncJournalProtocol
import SyncJournalWire

/// The attachment statements of ``PostgreSQLStorage`` (the tables of
/// ``PostgreSQLSchema`` version 8): what the shared `AttachmentRules`
/// query, and the writes that follow their decisions. A content's bytes
/// are rows of `attachment_chunks`: the uploading user's while the upload
/// runs, owner '' once stored.
extension PostgreSQLTransaction: AttachmentQueries {
    private func integer(_ sql: String, _ parameters: [PostgreSQLValue], table: String) throws(StorageError) -> Int64? {
        let rows = try run(sql, parameters)
        guard rows.count > 0 else { return nil }
        return try decode({ () throws(PostgreSQLError) in try rows.optionalInt64(0, 0) }, table: table, key: "")
    }

    func storedSize(of content: ContentHash) throws(StorageError) -> Int64? {
        try integer("select size from attachment_contents where hash = $1", [.text(content.hex)], table: "attachment_contents")
    }

    func hasUploaded(_ content: ContentHash, user: String) throws(StorageError) -> Bool {
        try integer("select 1::int8 from attachment_uploaders where owner = $1 and hash = $2", [.text(user), .text(content.hex)],
                    table: "attachment_uploaders") != nil
    }

    func isReferenced(_ content: ContentHash, byRowVisibleTo user: String) throws(StorageError) -> Bool {
        try integer("""
            select 1::int8 from attachment_references r
            where r.hash = $1 and ((r.space = '' and r.owner = $2)
              or (r.space <> '' and exists (select 1 from space_members m where m.space = r.space and m.member = $2)))
            limit 1
            """, [.text(content.hex), .text(user)], table: "attachment_references") != nil
    }

    func unfinishedUpload(of content: ContentHash, user: String) throws(StorageError) -> UnfinishedUpload? {
        let rows = try run("select size, received from attachment_uploads where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
        guard rows.count > 0 else { return nil }
        return try decode({ () throws(PostgreSQLError) in UnfinishedUpload(size: try rows.int64(0, 0), received: try rows.int64(0, 1)) },
                          table: "attachment_uploads", key: user)
    }

    func attachmentBytesCharged(to user: String) throws(StorageError) -> Int64 {
        try integer("""
            select (coalesce((select sum(c.size) from attachment_uploaders u join attachment_contents c on c.hash = u.hash where u.owner = $1), 0)
                  + coalesce((select sum(size) from attachment_uploads where owner = $1), 0))::int8
            """, [.text(user)], table: "attachment_uploads") ?? 0
    }

    /// Serialises the attachment requests of `user` across every server
    /// sharing the database until the transaction ends: an upload's
    /// decision (offset, quota) and its write are one step.
    func lockAttachments(of user: String) throws(StorageError) {
        _ = try run("select pg_advisory_xact_lock(hashtextextended('sync-journal attachments ' || $1, 0))", [.text(user)])
    }

    /// Replaces the references of the rows written with the contents their
    /// fields refer to (a tombstone refers to nothing).
    func writeReferences(_ written: [(row: ServerRow, owner: String, createdBy: String?)]) throws(StorageError) {
        let spaces = written.map { StorageTransaction.column($0.row.space) }
        _ = try run("""
            delete from attachment_references r using unnest($1::text[], $2::text[], $3::text[], $4::text[]) as t(s, w, k, i)
            where r.space = t.s and r.owner = t.w and r.kind = t.k and r.id = t.i
            """, [.textArray(spaces), .textArray(written.map(\.owner)), .textArray(written.map(\.row.kind)), .textArray(written.map(\.row.id))])
        var columns: (spaces: [String], owners: [String], kinds: [String], ids: [String], hashes: [String]) = ([], [], [], [], [])
        for (index, entry) in written.enumerated() where !entry.row.isTombstone {
            for content in Set(AttachmentRules.contents(of: entry.row.fields)) {
                columns.spaces.append(spaces[index])
                columns.owners.append(entry.owner)
                columns.kinds.append(entry.row.kind)
                columns.ids.append(entry.row.id)
                columns.hashes.append(content.hex)
            }
        }
        guard !columns.hashes.isEmpty else { return }
        _ = try run("""
            insert into attachment_references (space, owner, kind, id, hash)
            select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) on conflict do nothing
            """, [.textArray(columns.spaces), .textArray(columns.owners), .textArray(columns.kinds), .textArray(columns.ids),
                  .textArray(columns.hashes)])
    }

    /// Starts `user`'s upload of `content` with nothing received (dropping
    /// the bytes of one that declared another size).
    func startUpload(user: String, content: ContentHash, size: Int64, at now: Int64) throws(StorageError) {
        _ = try run("delete from attachment_chunks where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
        _ = try run("""
            insert into attachment_uploads (owner, hash, size, received, touched_at) values ($1, $2, $3, 0, $4)
            on conflict (owner, hash) do update set size = excluded.size, received = 0, touched_at = excluded.touched_at
            """, [.text(user), .text(content.hex), .int64(size), .int64(now)])
    }

    /// Keeps one chunk of `user`'s upload at `offset` and moves `received` past it.
    func appendChunk(user: String, content: ContentHash, offset: Int64, bytes: [UInt8], at now: Int64) throws(StorageError) {
        _ = try run("insert into attachment_chunks (owner, hash, position, bytes) values ($1, $2, $3, $4)",
                    [.text(user), .text(content.hex), .int64(offset), .bytes(bytes)])
        _ = try run("update attachment_uploads set received = $3, touched_at = $4 where owner = $1 and hash = $2",
                    [.text(user), .text(content.hex), .int64(offset + Int64(bytes.count)), .int64(now)])
    }

    /// Calls `consume` with the chunks of `owner`'s bytes of `content` that
    /// overlap `range`, in order, one statement per chunk (never the whole
    /// content in memory).
    func chunks(owner: String, content: ContentHash, overlapping range: Range<Int64>,
                _ consume: (_ position: Int64, _ bytes: [UInt8]) -> Void) throws(StorageError) {
        var position = range.lowerBound
        while position < range.upperBound {
            let rows = try run("""
                select position, bytes from attachment_chunks
                where owner = $1 and hash = $2 and position <= $3 and position + length(bytes) > $3
                order by position desc limit 1
                """, [.text(owner), .text(content.hex), .int64(position)])
            guard rows.count == 1 else {
                throw .corrupt(table: "attachment_chunks", key: content.hex, reason: "no chunk holds byte \(position)")
            }
            let (start, bytes) = try decode({ () throws(PostgreSQLError) in (try rows.int64(0, 0), try rows.bytes(0, 1)) },
                                            table: "attachment_chunks", key: content.hex)
            consume(start, bytes)
            position = start + Int64(bytes.count)
        }
    }

    /// Forgets `user`'s unfinished upload of `content` and its bytes.
    func removeUpload(user: String, content: ContentHash) throws(StorageError) {
        _ = try run("delete from attachment_chunks where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
        _ = try run("delete from attachment_uploads where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
    }

    /// Records a verified upload as stored: the first to store the content
    /// hands its chunks to the content (owner ''); a later one drops its
    /// own. The insert waits for another server storing the same content
    /// at once, so exactly one copy is kept.
    func storeUpload(user: String, content: ContentHash, size: Int64, at now: Int64) throws(StorageError) {
        let rows = try run("""
            insert into attachment_contents (hash, size, stored_at) values ($1, $2, $3)
            on conflict (hash) do update set stored_at = excluded.stored_at
            returning (case when xmax = 0 then 1 else 0 end)::int8
            """, [.text(content.hex), .int64(size), .int64(now)])
        let inserted = try decode({ () throws(PostgreSQLError) in try rows.int64(0, 0) }, table: "attachment_contents", key: content.hex) == 1
        if inserted {
            _ = try run("update attachment_chunks set owner = '' where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
            _ = try run("delete from attachment_uploads where owner = $1 and hash = $2", [.text(user), .text(content.hex)])
        } else {
            try removeUpload(user: user, content: content)
        }
        _ = try run("insert into attachment_uploaders (owner, hash) values ($1, $2) on conflict do nothing", [.text(user), .text(content.hex)])
    }

    /// Deletes the unfinished uploads untouched since `cutoff` and the
    /// contents no live row refers to, last uploaded before it, with no
    /// upload of them running; returns how many of each.
    func collectAttachments(before cutoff: Int64) throws(StorageError) -> AttachmentCollection {
        let uploads = try run("""
            with gone as (delete from attachment_uploads where touched_at < $1 returning owner, hash),
            bytes as (delete from attachment_chunks c using gone where c.owner = gone.owner and c.hash = gone.hash)
            select count(*)::int8 from gone
            """, [.int64(cutoff)])
        let contents = try run("""
            with gone as (
              delete from attachment_contents c where stored_at < $1
                and not exists (select 1 from attachment_references r where r.hash = c.hash)
                and not exists (select 1 from attachment_uploads u where u.hash = c.hash)
              returning hash),
            uploaders as (delete from attachment_uploaders u using gone where u.hash = gone.hash),
            bytes as (delete from attachment_chunks c using gone where c.owner = '' and c.hash = gone.hash)
            select count(*)::int8 from gone
            """, [.int64(cutoff)])
        return try decode({ () throws(PostgreSQLError) in
            AttachmentCollection(contents: Int(try contents.int64(0, 0)), uploads: Int(try uploads.int64(0, 0)))
        }, table: "attachment_contents", key: "")
    }
}
