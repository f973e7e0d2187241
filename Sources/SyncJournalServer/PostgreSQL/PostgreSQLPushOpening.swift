import SyncJournalProtocol

/// What a push reads under its user's stamp lock before applying anything:
/// the user's last stamp, the database's clock, the remembered results of
/// the push's operation ids and the stored rows it names; and, under the
/// locks of the shared spaces it writes into, each one's last stamp and the
/// user's role in it.
struct PostgreSQLPushOpening {
    /// The last stamp issued to the pushing user.
    var lastStamp: Int64
    /// The database server's clock, in milliseconds.
    var databaseNow: Int64
    /// Remembered results by operation id.
    var remembered: [String: ServerRow]
    /// Stored rows (any owner) by record.
    var rows: [RowAddress: OwnedRow]
    /// Per shared space the push writes into (locked), its last stamp and the user's role (`nil`: not a member).
    var spaces: [SpaceID: (last: Int64, role: SpaceRole?)]
}
