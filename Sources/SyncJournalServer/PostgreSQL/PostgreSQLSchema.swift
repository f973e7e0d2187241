/// The tables of ``StorageSchema`` in PostgreSQL's spelling
/// (journals/PROTOCOL.md, "Appendix: server storage"), one statement each
/// (libpq runs parameterised statements one at a time).
///
/// Differences from the SQLite spelling, and why:
/// - `kind`, `id`, `owner` are `text collate "C"`: ids compare by their
///   UTF-8 bytes, as in SQLite, whatever the database's locale.
/// - `fields` is `bytea`, stamps `bigint`.
/// - `"only"` is quoted: `only` is a reserved word in PostgreSQL.
/// - `storage_schema` holds the schema version (SQLite keeps it in `pragma user_version`).
/// - Stamps are counted per user (`user_stamps`), so pushes of different
///   users never wait for each other; the single `stamp` row of version 1
///   stays as the floor every user's counter starts from, which is at or
///   above every stamp version 1 issued.
/// - Tombstone horizons are kept per user and kind (`user_horizons`); the
///   per-kind `horizons` of version 1 still count for every user.
/// - Shared spaces (version 7) count stamps per space: `spaces.last`, the
///   space's row locked by the first statement of a push or membership
///   change that writes into it (several in id order). Their horizons are
///   kept per space and kind (`space_horizons`).
/// - `server_identity` holds the database's identity; the server inserts it
///   (made from the platform's random source) when it creates or upgrades
///   the schema, as no statement here takes parameters.
///
/// ```swift
/// for statement in PostgreSQLSchema.statements { try connection.execute(statement) }
/// ```
public enum PostgreSQLSchema {
    /// The DDL, idempotent (`if not exists`, `on conflict do nothing`).
    ///
    /// ```swift
    /// #expect(PostgreSQLSchema.statements.count == 16)
    /// ```
    public static let statements = [
        """
        create table if not exists rows (
          kind       text collate "C" not null,
          id         text collate "C" not null,
          owner      text collate "C" not null,
          fields     bytea not null,
          updated_at bigint not null,
          deleted_at bigint,
          primary key (kind, id)
        )
        """,
        "create index if not exists rows_pull on rows (kind, owner, updated_at, id)",
        """
        create table if not exists operations (
          owner        text collate "C" not null,
          operation_id text collate "C" not null,
          kind         text collate "C" not null,
          id           text collate "C" not null,
          fields       bytea not null,
          updated_at   bigint not null,
          deleted_at   bigint,
          primary key (owner, operation_id)
        )
        """,
        // Version 3: when the server remembered each operation (server
        // milliseconds), and the index pruning walks. The default is the
        // database's clock, so rows that were there at the upgrade (the
        // column is added once, rewriting the table) and rows a server of
        // an earlier version inserts later are dated, never pruned early.
        """
        alter table operations add column if not exists
          remembered_at bigint not null default ((extract(epoch from clock_timestamp()) * 1000)::bigint)
        """,
        "create index if not exists operations_remembered on operations (remembered_at)",
        // Version 4: the create whose record each row is (null for rows stored before).
        "alter table rows add column if not exists created_by text collate \"C\"",
        // Version 5: the highest model version that has written each row, and
        // that of each remembered result (null for those stored before).
        "alter table rows add column if not exists model_version bigint",
        "alter table operations add column if not exists model_version bigint",
        """
        create table if not exists stamp (
          "only" integer primary key check ("only" = 1),
          last   bigint not null
        )
        """,
        "insert into stamp (\"only\", last) values (1, 0) on conflict (\"only\") do nothing",
        """
        create table if not exists horizons (
          kind       text collate "C" primary key,
          updated_at bigint not null,
          id         text collate "C" not null
        )
        """,
        """
        create table if not exists storage_schema (
          "only"  integer primary key check ("only" = 1),
          version bigint not null
        )
        """,
        "insert into storage_schema (\"only\", version) values (1, \(version)) on conflict (\"only\") do nothing",
        """
        create table if not exists user_stamps (
          owner text collate "C" primary key,
          last  bigint not null
        )
        """,
        """
        create table if not exists user_horizons (
          owner      text collate "C" not null,
          kind       text collate "C" not null,
          updated_at bigint not null,
          id         text collate "C" not null,
          primary key (owner, kind)
        )
        """,
        // Version 6: the database's identity (journals/PROTOCOL.md, "Server identity").
        """
        create table if not exists server_identity (
          "only"   integer primary key check ("only" = 1),
          identity text collate "C" not null
        )
        """,
        // Version 7: shared spaces. Rows are named by space, owner, kind and
        // id: a personal row's space is empty, a shared row's owner is.
        "alter table rows add column if not exists space text collate \"C\" not null default ''",
        """
        do $$ begin
          if pg_get_constraintdef((select oid from pg_constraint where conrelid = 'rows'::regclass and contype = 'p'))
             = 'PRIMARY KEY (kind, id)' then
            alter table rows drop constraint rows_pkey;
            alter table rows add constraint rows_pkey primary key (space, owner, kind, id);
          end if;
        end $$
        """,
        "drop index if exists rows_pull",
        "create index if not exists rows_space_pull on rows (space, owner, kind, updated_at, id)",
        "alter table operations add column if not exists space text collate \"C\" not null default ''",
        """
        create table if not exists spaces (
          id      text collate "C" primary key,
          name    text not null,
          version bigint not null,
          last    bigint not null
        )
        """,
        """
        create table if not exists space_members (
          space  text collate "C" not null,
          member text collate "C" not null,
          role   text not null,
          primary key (space, member)
        )
        """,
        "create index if not exists space_members_by_member on space_members (member, space)",
        """
        create table if not exists space_horizons (
          space      text collate "C" not null,
          kind       text collate "C" not null,
          updated_at bigint not null,
          id         text collate "C" not null,
          primary key (space, kind)
        )
        """,
        // Version 8: attachments. Bytes live in `attachment_chunks`, keyed by
        // the uploading user (owner '' once the content is stored) and offset.
        """
        create table if not exists attachment_contents (
          hash      text collate "C" primary key,
          size      bigint not null,
          stored_at bigint not null
        )
        """,
        """
        create table if not exists attachment_uploads (
          owner      text collate "C" not null,
          hash       text collate "C" not null,
          size       bigint not null,
          received   bigint not null,
          touched_at bigint not null,
          primary key (owner, hash)
        )
        """,
        "create index if not exists attachment_uploads_by_hash on attachment_uploads (hash)",
        """
        create table if not exists attachment_uploaders (
          owner text collate "C" not null,
          hash  text collate "C" not null,
          primary key (owner, hash)
        )
        """,
        "create index if not exists attachment_uploaders_by_hash on attachment_uploaders (hash)",
        """
        create table if not exists attachment_references (
          space text collate "C" not null,
          owner text collate "C" not null,
          kind  text collate "C" not null,
          id    text collate "C" not null,
          hash  text collate "C" not null,
          primary key (space, owner, kind, id, hash)
        )
        """,
        "create index if not exists attachment_references_by_hash on attachment_references (hash, space, owner)",
        """
        create table if not exists attachment_chunks (
          owner    text collate "C" not null,
          hash     text collate "C" not null,
          position bigint not null,
          bytes    bytea not null,
          primary key (owner, hash, position)
        )
        """,
    ]

    /// Gives a database without an identity (a new one, or one of version 5
    /// or before being upgraded) the identity `$1`; one that has an identity keeps it.
    ///
    /// ```swift
    /// try connection.execute(PostgreSQLSchema.insertIdentity, [.text(ServerIdentity.random().text)])
    /// ```
    public static let insertIdentity = "insert into server_identity (\"only\", identity) values (1, $1) on conflict (\"only\") do nothing"

    /// The PostgreSQL schema's version: 2 counts stamps and horizons per
    /// user. A database of version 1 (one stamp row for everyone) is moved
    /// to 2 when a server opens it: the new tables are created empty and
    /// every stored stamp stays as it is.
    ///
    /// Version 3 dates remembered operations (`operations.remembered_at`)
    /// so they can be pruned after a retention; opening a version 1 or 2
    /// database adds the column and dates what it remembers at the upgrade.
    ///
    /// Version 4 keeps the create whose record each row is
    /// (`rows.created_by`); rows stored before have none.
    ///
    /// Version 5 keeps the highest model version that has written each row
    /// (`rows.model_version`) and the one of each remembered result
    /// (`operations.model_version`); those stored before have none.
    ///
    /// Version 6 keeps the database's identity (`server_identity`); a
    /// database of version 5 or before gets a new random one when opened.
    ///
    /// Version 7 adds shared spaces: rows named by space, owner, kind and
    /// id (every row stored before stays in its owner's personal space),
    /// `operations.space`, `spaces`, `space_members` and `space_horizons`.
    ///
    /// ```swift
    /// #expect(PostgreSQLSchema.version == 8)
    /// ```
    public static let version: Int64 = 8

    /// The versions a server of this build opens (and moves to ``version``).
    static let openableVersions: ClosedRange<Int64> = 1...8

    /// The key of the transaction-scoped advisory lock that serialises
    /// migrations: two servers starting at once on an empty database would
    /// otherwise race `create table if not exists` into a unique violation
    /// in the catalog.
    static let migrationLockKey: Int64 = 0x5359_4E43_4A52_4E4C   // "SYNCJRNL"
}
