/// The tables every ``SyncStorage`` keeps, as SQLite DDL (journals/PROTOCOL.md,
/// "Appendix: server storage", gives the PostgreSQL spelling).
///
/// - `rows`: one per record, tombstones included until purged, named by
///   space, owner, kind and id: `space` is empty for a personal space and
///   the shared space's id otherwise; `owner` is the user of a personal
///   space and empty in a shared one (version 6; before it, every row was
///   personal and named by kind and id alone). `fields` is
///   the record's field list in journals/FORMAT.md's encoding (names sorted
///   by bytes, typed values; exact for doubles and sets). `created_by` is
///   the operation id of the create whose record it is (null for rows of
///   version 2 and before). `model_version` is the highest model version
///   that has written the record (null when none stated one, and for rows of
///   version 3 and before). The index serves pulls: one kind of one space
///   and owner after a `(updated_at, id)` cursor.
/// - `operations`: the applied operations per user with the row the push
///   answered (only applied results are remembered, so the row is the result,
///   its `model_version` included, and its `space`, version 6) and when the server remembered it (`remembered_at`, server time in
///   milliseconds; the index serves pruning past the retention).
/// - `stamp`: one row, the last stamp issued; it serves every space.
/// - `horizons`: per space and kind, the position of the last tombstone
///   purged (`space` empty: the personal spaces, as before version 6).
/// - `spaces` and `space_members` (version 6): each shared space with its
///   name, `version` (the stamp of its last membership change, rename or
///   creation) and `last` (the last stamp drawn in it, so a pull skips a
///   space with nothing past its cursors), and each member's role. The
///   index `space_members_by_member` serves the one read of a user's
///   memberships that every pull across spaces and every wait starts with.
/// - `server_identity`: one row, the database's identity (journals/PROTOCOL.md,
///   "Server identity"), made with the schema or when a database of version
///   4 or before is upgraded, and replaced only by the operator
///   (`sync-server --new-identity`).
///
/// - The attachment tables (version 7; journals/PROTOCOL.md,
///   "Attachments"): `attachment_contents` holds each content held whole
///   (its bytes are a file beside the database, see `AttachmentFiles`),
///   `stored_at` its last whole upload; `attachment_uploads` each user's
///   unfinished upload with its declared size and the bytes `received`
///   (synced to its file before they are counted); `attachment_uploaders`
///   who uploaded what whole, for the read rule and the quota; and
///   `attachment_references` which live rows refer to which content,
///   rewritten with every row written (a tombstone refers to nothing).
///
/// ```swift
/// try database.execute(StorageSchema.sqlite)
/// ```
public enum StorageSchema {
    /// The schema's version, kept in SQLite's `user_version`.
    ///
    /// ```swift
    /// #expect(StorageSchema.version == 7)
    /// ```
    ///
    /// Version 2 added `operations.remembered_at` and its index; version 3
    /// `rows.created_by`; version 4 `rows.model_version` and
    /// `operations.model_version`; version 5 `server_identity`; version 6
    /// shared spaces (``sqliteFromVersion5``); version 7 the attachment
    /// tables (created empty: no row stored before refers to a content).
    public static let version: Int64 = 7

    /// Moves a version 1 database to version 2, run in the migration's
    /// transaction before ``sqlite``: adds the column (see
    /// ``sqliteDateVersion1Operations`` for the dates it starts with).
    ///
    /// ```swift
    /// try database.execute(StorageSchema.sqliteFromVersion1)
    /// ```
    public static let sqliteFromVersion1 = "alter table operations add column remembered_at integer not null default 0"

    /// Dates every operation remembered by version 1 at the upgrade (`?1`,
    /// server time): their age is unknown, so none is pruned before a full
    /// retention has passed since.
    ///
    /// ```swift
    /// try database.withStatement(StorageSchema.sqliteDateVersion1Operations) { $0.bind(1, now); _ = try $0.step() }
    /// ```
    public static let sqliteDateVersion1Operations = "update operations set remembered_at = ?1"

    /// Moves a version 1 or 2 database to version 3, run in the migration's
    /// transaction before ``sqlite``: the rows stored so far get no creating
    /// operation (null), and a create resent after its id is forgotten is
    /// judged for them by its `queuedAt` alone, as before.
    ///
    /// ```swift
    /// try database.execute(StorageSchema.sqliteFromVersion2)
    /// ```
    public static let sqliteFromVersion2 = "alter table rows add column created_by text"

    /// Moves a version 1, 2 or 3 database to version 4, run in the
    /// migration's transaction (after ``sqliteFromVersion2`` where it
    /// applies) before ``sqlite``: the rows and remembered results stored so
    /// far have no model version (null), as no write stated one.
    ///
    /// ```swift
    /// try database.execute(StorageSchema.sqliteFromVersion3)
    /// ```
    public static let sqliteFromVersion3 = """
        alter table rows add column model_version integer;
        alter table operations add column model_version integer;
        """

    /// Moves a version 1 to 5 database to version 6, run in the migration's
    /// transaction (after the earlier steps that apply) before ``sqlite``:
    /// `rows` is rebuilt keyed by space, owner, kind and id with every row
    /// it held in the personal space of its owner, unchanged otherwise;
    /// `horizons` is rebuilt keyed by space and kind, each kept as the
    /// personal spaces' horizon. (Then ``sqliteOperationsSpace``.) Each step
    /// runs only on a table that lacks its `space` column.
    ///
    /// ```swift
    /// try database.execute(StorageSchema.sqliteFromVersion5)
    /// ```
    public static let sqliteFromVersion5 = """
        create table rows_by_space (
          space      text not null default '',
          owner      text not null,
          kind       text not null,
          id         text not null,
          fields     blob not null,
          updated_at integer not null,
          deleted_at integer,
          created_by text,
          model_version integer,
          primary key (space, owner, kind, id)
        ) without rowid;
        insert into rows_by_space (space, owner, kind, id, fields, updated_at, deleted_at, created_by, model_version)
          select '', owner, kind, id, fields, updated_at, deleted_at, created_by, model_version from rows;
        drop table rows;
        alter table rows_by_space rename to rows;
        """

    /// The second step of ``sqliteFromVersion5``: `horizons` keyed by space and kind.
    public static let sqliteHorizonsBySpace = """
        create table horizons_by_space (
          space      text not null default '',
          kind       text not null,
          updated_at integer not null,
          id         text not null,
          primary key (space, kind)
        ) without rowid;
        insert into horizons_by_space (space, kind, updated_at, id) select '', kind, updated_at, id from horizons;
        drop table horizons;
        alter table horizons_by_space rename to horizons;
        """

    /// The last step of the move to version 6: each remembered result's
    /// space (empty: personal, as every one stored before).
    public static let sqliteOperationsSpace = "alter table operations add column space text not null default ''"

    /// Gives a database without an identity (a new one, or one of version
    /// 4 or before being upgraded) the identity `?1`, run in the migration's
    /// transaction after ``sqlite``; one that has an identity keeps it.
    ///
    /// ```swift
    /// try database.withStatement(StorageSchema.sqliteIdentity) { $0.bind(1, ServerIdentity.random().text); _ = try $0.step() }
    /// ```
    public static let sqliteIdentity = "insert or ignore into server_identity (only, identity) values (1, ?1)"

    /// The DDL, idempotent (`if not exists`).
    ///
    /// ```swift
    /// try database.execute(StorageSchema.sqlite)
    /// ```
    public static let sqlite = """
        create table if not exists rows (
          space      text not null default '',
          owner      text not null,
          kind       text not null,
          id         text not null,
          fields     blob not null,
          updated_at integer not null,
          deleted_at integer,
          created_by text,
          model_version integer,
          primary key (space, owner, kind, id)
        ) without rowid;
        create index if not exists rows_pull on rows (space, owner, kind, updated_at, id);
        create table if not exists operations (
          owner        text not null,
          operation_id text not null,
          kind         text not null,
          id           text not null,
          fields       blob not null,
          updated_at   integer not null,
          deleted_at   integer,
          remembered_at integer not null default 0,
          model_version integer,
          space        text not null default '',
          primary key (owner, operation_id)
        ) without rowid;
        create index if not exists operations_remembered on operations (remembered_at);
        create table if not exists stamp (
          only integer primary key check (only = 1),
          last integer not null
        );
        insert or ignore into stamp (only, last) values (1, 0);
        create table if not exists horizons (
          space      text not null default '',
          kind       text not null,
          updated_at integer not null,
          id         text not null,
          primary key (space, kind)
        ) without rowid;
        create table if not exists spaces (
          id      text primary key,
          name    text not null,
          version integer not null,
          last    integer not null
        ) without rowid;
        create table if not exists space_members (
          space  text not null,
          member text not null,
          role   text not null,
          primary key (space, member)
        ) without rowid;
        create index if not exists space_members_by_member on space_members (member, space);
        create table if not exists server_identity (
          only     integer primary key check (only = 1),
          identity text not null
        );
        create table if not exists attachment_contents (
          hash      text primary key,
          size      integer not null,
          stored_at integer not null
        ) without rowid;
        create table if not exists attachment_uploads (
          owner      text not null,
          hash       text not null,
          size       integer not null,
          received   integer not null,
          touched_at integer not null,
          primary key (owner, hash)
        ) without rowid;
        create index if not exists attachment_uploads_by_hash on attachment_uploads (hash);
        create table if not exists attachment_uploaders (
          owner text not null,
          hash  text not null,
          primary key (owner, hash)
        ) without rowid;
        create index if not exists attachment_uploaders_by_hash on attachment_uploaders (hash);
        create table if not exists attachment_references (
          space text not null,
          owner text not null,
          kind  text not null,
          id    text not null,
          hash  text not null,
          primary key (space, owner, kind, id, hash)
        ) without rowid;
        create index if not exists attachment_references_by_hash on attachment_references (hash, space, owner);
        """
}
