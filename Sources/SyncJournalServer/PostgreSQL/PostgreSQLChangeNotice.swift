import SyncJournalProtocol
import SyncJournalWire

/// The notification of a committed push, sent to every `sync-server` sharing
/// the database: on channel ``channel``, a JSON line
/// `{"kinds": [KIND, …], "user": USER}` (`{"user": USER}` when the kinds
/// would not fit PostgreSQL's 8000-byte payload limit: any kind), a line
/// feed, and the schema the push wrote (`current_schema()`). Channels are
/// per database, so a listener ignores the pushes of other schemas.
///
/// A push into a shared space says `{"kinds": [KIND, …], "space": SPACEID}`
/// (`{"space": SPACEID}`: any kind); a membership change
/// `{"membership": SPACEID, "users": [USER, …]}`, or `{}` when the users
/// would not fit, which a listener takes as "anything may have changed".
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
        payload(.user(user), names: kinds)
    }

    /// The payload's JSON line for `subject` with its kinds or users.
    static func payload(_ subject: PostgreSQLChangeSubject, names: Set<String>) -> String {
        let list = JSONValue.array(names.sorted().map { .string($0) })
        let (full, short): ([String: JSONValue], [String: JSONValue])
        switch subject {
        case .user(let user): (full, short) = (["user": .string(user), "kinds": list], ["user": .string(user)])
        case .space(let space): (full, short) = (["space": .string(space.description), "kinds": list], ["space": .string(space.description)])
        case .membership(let space): (full, short) = (["membership": .string(space.description), "users": list], [:])
        }
        let encoded = JSONValue.object(full).encoded()
        if encoded.count <= maximumPayloadBytes { return String(decoding: encoded, as: UTF8.self) }
        return String(decoding: JSONValue.object(short).encoded(), as: UTF8.self)
    }

    /// What a payload says to a listener on `schema`: `nil` for a push to
    /// another schema; one that cannot be read says that anything may have changed.
    static func change(from payload: String, schema: String) -> StorageChange? {
        let bytes = Array(payload.utf8)
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return .unknown }
        if String(decoding: bytes[(newline + 1)...], as: UTF8.self) != schema { return nil }
        guard case .object(let members)? = try? JSONParser().parse(bytes[..<newline]) else { return .unknown }
        if case .string(let text)? = members["membership"] {
            guard let space = SpaceID(text), let users = names(members["users"]) else { return .unknown }
            return .membershipChanged(space, users: users)
        }
        if case .string(let text)? = members["space"] {
            guard let space = SpaceID(text) else { return .unknown }
            return .committedInSpace(space, kinds: names(members["kinds"]) ?? [])
        }
        guard case .string(let user)? = members["user"] else { return .unknown }
        return .committed(user: user, kinds: names(members["kinds"]) ?? [])
    }

    /// The strings of a JSON array, `nil` when it is missing or holds anything else.
    private static func names(_ value: JSONValue?) -> Set<String>? {
        guard case .array(let items)? = value else { return nil }
        var names: Set<String> = []
        for item in items {
            guard case .string(let name) = item else { return nil }
            names.insert(name)
        }
        return names
    }
}
