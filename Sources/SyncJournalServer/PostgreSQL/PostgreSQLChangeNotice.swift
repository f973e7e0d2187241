import SyncJournalProtocol
import SyncJournalWire

/// The notification of a committed push, sent to every `sync-server` sharing
/// the database: on channel ``channel``, a JSON line
/// `{"kinds": [KIND, …], "user": USER}` (`{"user": USER}` when the kinds
/// would not fit PostgreSQL's 8000-byte payload limit: any kind), a line
/// feed, and the schema the push wrote (`current_schema()`). Channels are
/// per database, so a listener ignores the pushes of other schemas.
///
/// ```swift
/// let payload = PostgreSQLChangeNotice.payload(user: "u1", kinds: ["pin"]) + "\n" + "public"
/// let change = PostgreSQLChangeNotice.change(from: payload, schema: "public")   // .committed(user: "u1", kinds: ["pin"])
/// ```
enum PostgreSQLChangeNotice {
    /// The channel pushes notify and listeners listen on.
    static let channel = "sync_journal_changes"
    /// The statement that sends one notification per payload in `$2` on
    /// channel `$1`, each payload followed by a line feed and the schema.
    static let notifyStatement = "select pg_notify($1, p || chr(10) || coalesce(current_schema(), '')) from unnest($2::text[]) as p"
    /// The longest payload sent (PostgreSQL takes under 8000 bytes).
    static let maximumPayloadBytes = 7_900

    /// The payload's JSON line for pushes of `user` that wrote rows of `kinds`
    /// (``notifyStatement`` adds the line feed and the schema).
    static func payload(user: String, kinds: Set<String>) -> String {
        let full = JSONValue.object(["user": .string(user), "kinds": .array(kinds.sorted().map { .string($0) })]).encoded()
        if full.count <= maximumPayloadBytes { return String(decoding: full, as: UTF8.self) }
        return String(decoding: JSONValue.object(["user": .string(user)]).encoded(), as: UTF8.self)
    }

    /// What a payload says to a listener on `schema`: `nil` for a push to
    /// another schema; one that cannot be read says that anything may have changed.
    static func change(from payload: String, schema: String) -> StorageChange? {
        let bytes = Array(payload.utf8)
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return .unknown }
        if String(decoding: bytes[(newline + 1)...], as: UTF8.self) != schema { return nil }
        guard case .object(let members)? = try? JSONParser().parse(bytes[..<newline]),
              case .string(let user)? = members["user"] else { return .unknown }
        var kinds: Set<String> = []
        if case .array(let items)? = members["kinds"] {
            for item in items {
                guard case .string(let kind) = item else { return .committed(user: user, kinds: []) }
                kinds.insert(kind)
            }
        }
        return .committed(user: user, kinds: kinds)
    }
}
