/// The statements one ``PostgreSQLConnection`` has prepared on its server
/// session, by SQL text and parameter types.
///
/// A statement sent unnamed is parsed, analysed and planned again every
/// time; a push's handful of statements spent about half of the database's
/// CPU there, and preparing saves the parsing and analysis (the connection
/// keeps planning each run, with `plan_cache_mode = force_custom_plan`). A statement is prepared the second time its text is seen on a
/// connection, so one-off statements (schema set-up, a `listen`) never take
/// a name, and at most ``capacity`` are kept per connection.
///
/// The parameter types are part of the key: binary parameters are read by
/// the type the statement was prepared with, so the same text sent with
/// other types must be another statement.
struct PreparedStatementCache {
    /// How a statement is sent.
    enum Plan: Equatable {
        /// As an unnamed statement (`PQexecParams` / `PQsendQueryParams`).
        case unnamed
        /// Prepare it under this name first, then run it by name.
        case prepare(String)
        /// Run the statement already prepared under this name.
        case prepared(String)
    }

    struct Key: Hashable {
        var sql: String
        var types: [UInt32]
    }

    /// The most statements prepared on one connection.
    static let capacity = 64
    /// The most texts remembered as seen once; past it the record starts over.
    static let seenCapacity = 256

    private var names: [Key: String] = [:]
    private var seenOnce: Set<Key> = []
    private var nextNumber = 0

    /// How many statements are prepared (or being prepared).
    var count: Int { names.count }

    /// How to send `sql` with parameters of `types`. A `.prepare` answer
    /// counts the name as taken at once, so a later statement of the same
    /// pipeline runs it by name; call ``abandon(_:)`` if the prepare fails.
    mutating func plan(sql: String, types: [UInt32]) -> Plan {
        let key = Key(sql: sql, types: types)
        if let name = names[key] { return .prepared(name) }
        guard names.count < Self.capacity else { return .unnamed }
        guard seenOnce.remove(key) != nil else {
            if seenOnce.count >= Self.seenCapacity { seenOnce.removeAll(keepingCapacity: true) }
            seenOnce.insert(key)
            return .unnamed
        }
        // A prefix no client code would choose; the number keeps names unique for the session.
        let name = "syncjournal_\(nextNumber)"
        nextNumber += 1
        names[key] = name
        return .prepare(name)
    }

    /// Forgets the statement prepared as `name` (its prepare failed, so the
    /// server does not know the name).
    mutating func abandon(_ name: String) {
        names = names.filter { $0.value != name }
    }

    /// Forgets every statement: the session lost them (a new connection, a
    /// `DEALLOCATE ALL`, a pooler that changed server session) or one no
    /// longer matches its tables. Names are never reused, so an old name
    /// left on the server cannot answer for a new statement.
    mutating func forgetAll() {
        names.removeAll()
        seenOnce.removeAll()
    }
}
