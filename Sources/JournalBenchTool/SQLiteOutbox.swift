import CSQLite

/// The baseline an app would pick instead of this package: an offline-first app's
/// `outbox` table in SQLite (WAL mode), through the C library.
final class SQLiteOutbox {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private let path: String

    /// `synchronous=FULL` or `NORMAL` (both in WAL mode).
    enum Synchronous: String { case full = "FULL", normal = "NORMAL" }

    /// The outbox table an offline-first app keeps in SQLite.
    static let schema = """
        create table outbox (
          seq             integer primary key autoincrement,
          kind            text not null,
          op              text not null,
          record_id       text not null,
          base_updated_at integer,
          payload         text not null,
          queued_at       integer not null,
          attempts        integer not null default 0,
          last_error      text
        );
        """

    /// Creates a fresh database at `path` with the outbox table.
    init(path: String, synchronous: Synchronous) throws(BenchError) {
        self.path = path
        Files.remove(path)
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            db = nil
            throw BenchError("sqlite open \(path): \(message)")
        }
        do throws(BenchError) {
            try exec("pragma journal_mode=WAL")
            try exec("pragma synchronous=\(synchronous.rawValue)")
            try exec(Self.schema)
            let sql = "insert into outbox (kind, op, record_id, base_updated_at, payload, queued_at) values (?, ?, ?, ?, ?, ?)"
            guard sqlite3_prepare_v2(db, sql, -1, &insert, nil) == SQLITE_OK else { throw BenchError("sqlite prepare: \(errorMessage)") }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private var errorMessage: String { db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    func exec(_ sql: String) throws(BenchError) {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? errorMessage
            sqlite3_free(message)
            throw BenchError("sqlite \(sql.prefix(40)): \(text)")
        }
    }

    /// Inserts one outbox row (the caller brackets transactions).
    func insertRow(recordID: String, payload: String, queuedAt: Int64) throws(BenchError) {
        // SQLITE_STATIC (nil): the strings outlive the step below.
        let result: Int32 = "item".withCString { kind in
            "update".withCString { op in
                recordID.withCString { id in
                    payload.withCString { text in
                        sqlite3_bind_text(insert, 1, kind, -1, nil)
                        sqlite3_bind_text(insert, 2, op, -1, nil)
                        sqlite3_bind_text(insert, 3, id, -1, nil)
                        sqlite3_bind_int64(insert, 4, 1_764_000_000_000)
                        sqlite3_bind_text(insert, 5, text, -1, nil)
                        sqlite3_bind_int64(insert, 6, queuedAt)
                        let step = sqlite3_step(insert)
                        sqlite3_reset(insert)
                        sqlite3_clear_bindings(insert)
                        return step
                    }
                }
            }
        }
        guard result == SQLITE_DONE else { throw BenchError("sqlite insert: \(errorMessage)") }
    }

    /// Inserts `count` rows, `perTransaction` to a transaction; returns
    /// seconds and the latency of each transaction.
    func run(count: Int, perTransaction: Int, payload: String) throws(BenchError) -> RawFile.Run {
        var latencies: [Double] = []
        latencies.reserveCapacity(count / max(1, perTransaction) + 1)
        let start = Clock.now()
        var done = 0
        while done < count {
            let n = min(max(1, perTransaction), count - done)
            let began = Clock.now()
            try exec("begin")
            for i in 0..<n { try insertRow(recordID: "r\(done + i)", payload: payload, queuedAt: 1_764_000_000_000 + Int64(done + i)) }
            try exec("commit")
            latencies.append(Clock.now() - began)
            done += n
        }
        return RawFile.Run(seconds: Clock.now() - start, latencies: latencies)
    }

    func close() {
        if let insert { sqlite3_finalize(insert) }
        insert = nil
        if let db { sqlite3_close(db) }
        db = nil
    }

    /// Runs one SQLite baseline in a fresh database and removes it afterwards.
    static func measure(path: String, synchronous: Synchronous, count: Int, perTransaction: Int, payload: String) throws(BenchError) -> RawFile.Run {
        let outbox = try SQLiteOutbox(path: path, synchronous: synchronous)
        defer {
            outbox.close()
            Files.remove(path)
        }
        return try outbox.run(count: count, perTransaction: perTransaction, payload: payload)
    }
}
