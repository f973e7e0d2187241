import SyncJournalProtocol

/// Why a ``SyncStorage`` call failed, classified for the HTTP reply.
///
/// ```swift
/// catch .cursorExpired(let kinds, let spaceKinds) { reply(410, kinds, spaceKinds) }
/// ```
public enum StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A cursor the storage cannot use (an empty id, one longer than a record id may be): 400 `bad_cursor`.
    case badCursor(kind: String, reason: String)
    /// A request outside the protocol's limits (a limit of 0, too many kinds),
    /// or one the database refused to hold: 400 `bad_request`.
    case badRequest(String)
    /// Cursors behind a purged tombstone: 410 `cursor_expired` with the
    /// personal space's `kinds` and each shared space's `spaceKinds`, kinds sorted.
    case cursorExpired(kinds: [String], spaceKinds: [SpaceID: [String]] = [:])
    /// The request expects another server, or one further along (a
    /// restored database); nothing was applied: 409 `server_mismatch`.
    case serverMismatch(ServerMismatch)
    /// The database is locked past the busy timeout (SQLite `SQLITE_BUSY`; in
    /// PostgreSQL a lock timeout or serialization failure): 503
    /// `unavailable`, worth retrying. Backend-neutral, so every backend maps its own.
    case unavailable(reason: String)
    /// Any other SQLite failure (I/O, full disk, corruption): 500 `internal`.
    /// (Another backend adds its own case; the router's exhaustive switch says where to map it.)
    case sqlite(SQLiteError)
    /// Any other PostgreSQL failure (a constraint, a full disk, a retryable
    /// failure that outlived its retries): 500 `internal`, SQLSTATE in the log.
    case postgres(PostgreSQLError)
    /// A stored row or remembered result that does not decode: 500 `internal`.
    case corrupt(table: String, key: String, reason: String)
    /// A membership change the rules refuse (journals/PROTOCOL.md,
    /// "Membership"): 404 `no_such_space` or `unknown_user`, 403
    /// `forbidden`, 409 `space_exists`, `last_owner` or `too_many`.
    case spaceRefused(SpaceRefusal)
    /// An attachment request the rules refuse (journals/PROTOCOL.md,
    /// "Attachments"): 409 `wrong_offset`, 413, 422 or 404
    /// `no_such_content`, as ``AttachmentRefusal/httpStatus`` says; nothing was kept.
    case attachmentRefused(AttachmentRefusal)
    /// A file of the attachment store could not be read or written (500);
    /// the upload's `received` stays where the database has it.
    case attachmentFile(AttachmentFileError)

    /// The error for a failed SQLite call: busy and locked are
    /// ``unavailable(reason:)``; a value over SQLite's length limit
    /// (`SQLITE_TOOBIG`) is ``badRequest(_:)``, as the request caused it.
    ///
    /// ```swift
    /// throw StorageError(sqlite: error)
    /// ```
    public init(sqlite error: SQLiteError) {
        if error.isBusy {
            self = .unavailable(reason: error.description)
        } else if error.primaryCode == 18 {
            // SQLITE_TOOBIG: a value over SQLite's length limit came from the request.
            self = .badRequest(Self.cannotHold(error.message))
        } else {
            self = .sqlite(error)
        }
    }

    /// The error for a failed libpq call, after the storage's retries: a lost
    /// connection, a serialization failure, a deadlock or a lock timeout is
    /// ``unavailable(reason:)`` (503, worth retrying later); anything else ``postgres(_:)``.
    ///
    /// A data exception (SQLSTATE class `22`) or a program limit (class `54`,
    /// such as a key past an index entry's size) comes from what the request
    /// holds: resending it cannot help, so it is ``badRequest(_:)`` (400),
    /// never a 500 the client would retry for ever. The protocol's limits
    /// keep every valid request clear of these; this is the last line.
    ///
    /// ```swift
    /// throw StorageError(postgres: error)
    /// ```
    public init(postgres error: PostgreSQLError) {
        let state = error.sqlState ?? ""
        let transient = error.isConnectionFailure || error.isLockTimeout || ["40001", "40P01"].contains(state)
        if transient {
            self = .unavailable(reason: error.description)
        } else if state.hasPrefix("22") || state.hasPrefix("54") {
            self = .badRequest(Self.cannotHold("sqlstate \(state): \(error.message)"))
        } else {
            self = .postgres(error)
        }
    }

    /// The reason given for a request the database refused to hold.
    private static func cannotHold(_ detail: String) -> String {
        "the database cannot hold this request (\(detail.prefix(200))); nothing of it was applied"
    }

    /// The error for a pull the rules refuse: 400 or 410, as the refusal says.
    ///
    /// ```swift
    /// do throws(PullRefusal) { try StorageRules.validate(request) } catch { throw StorageError(error) }
    /// ```
    package init(_ refusal: PullRefusal) {
        switch refusal {
        case .badRequest(let reason): self = .badRequest(reason)
        case .badCursor(let kind, let reason): self = .badCursor(kind: kind, reason: reason)
        case .cursorExpired(let kinds, let spaceKinds): self = .cursorExpired(kinds: kinds, spaceKinds: spaceKinds)
        }
    }

    /// One line for the log (the HTTP reply carries less for 5xx).
    public var description: String {
        switch self {
        case .badCursor(let kind, let reason): return "bad cursor for \(kind): \(reason)"
        case .badRequest(let reason): return "bad request: \(reason)"
        case .cursorExpired(let kinds, let spaceKinds): return "cursor expired for \(PullRefusal.expiredKinds(kinds, spaceKinds).joined(separator: ", "))"
        case .serverMismatch(let mismatch): return "server mismatch: \(mismatch)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        case .sqlite(let error): return error.description
        case .postgres(let error): return error.description
        case .corrupt(let table, let key, let reason): return "corrupt \(table) entry \(key): \(reason)"
        case .spaceRefused(let refusal): return "refused: \(refusal)"
        case .attachmentRefused(let refusal): return "refused: \(refusal)"
        case .attachmentFile(let error): return error.description
        }
    }
}
