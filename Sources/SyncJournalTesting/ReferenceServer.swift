import SyncJournalStore
import SyncJournalSync

/// An in-memory server with the protocol's exact semantics, for tests, the
/// simulator and `sync-demo` (and for apps' own tests).
///
/// - Users own records: a mutation of another user's record is rejected
///   (permanently, with a reason), never applied and never a crash.
/// - Stamps are issued by the server, strictly increasing per row and never
///   decreasing overall; rows written between two pulls may share a stamp
///   (until ``tick(_:)``), and the `(updatedAt, id)` cursor handles the tie.
///   Once a pull has handed out a stamp, later writes get a larger one, so a
///   row can never appear behind a cursor a client already holds.
/// - Deletes are soft: tombstones are pulled like rows.
/// - A malformed cursor is a permanent error, never "send everything".
/// - Pages fetch `limit + 1` rows to compute `hasMore`.
/// - Operation ids are remembered: a replayed id gets its first result, so a
///   resend after a lost reply never applies an operation twice.
///
/// ```swift
/// let server = ReferenceServer()
/// let transport = server.transport(user: "u1")
/// await server.write(user: "u1", kind: "pin", id: "p9", fields: ["name": .string("Tapas bar")])
/// ```
public actor ReferenceServer {
    private struct Stored {
        var row: ServerRow
        var owner: String
    }

    private var table: [RecordKey: Stored] = [:]
    private struct Remembered: Hashable {
        var user: String
        var operationID: OperationID
    }
    private var remembered: [Remembered: MutationResult] = [:]
    private var clock: Int64
    private var lastIssued: Int64 = .min
    /// The largest stamp a pull has handed out; later writes go above it.
    private var sealed: Int64 = .min
    private var pushCount = 0
    private var appliedCount = 0

    /// A server whose clock starts at `startMilliseconds`.
    public init(startMilliseconds: Int64 = 1_764_000_000_000) {
        clock = startMilliseconds
    }

    /// A transport that talks to this server as `user`.
    public nonisolated func transport(user: String) -> ReferenceTransport {
        ReferenceTransport(server: self, user: user)
    }

    /// Advances the server's clock; until then, writes share a stamp.
    public func tick(_ milliseconds: Int64) { clock += max(0, milliseconds) }

    /// Push requests received.
    public var pushes: Int { pushCount }
    /// Mutations applied (a replayed id is not applied again).
    public var appliedMutations: Int { appliedCount }

    private func stamp(for key: RecordKey) -> Int64 {
        var value = max(clock, lastIssued)
        if sealed != .min { value = max(value, sealed + 1) }
        if let existing = table[key] { value = max(value, existing.row.updatedAt + 1) }
        lastIssued = value
        return value
    }

    // MARK: The protocol

    /// Applies `mutations` in order for `user` and returns one result each.
    public func push(user: String, _ mutations: [Mutation]) -> [MutationResult] {
        pushCount += 1
        return mutations.map { mutation in
            let key = Remembered(user: user, operationID: mutation.operationID)
            if let first = remembered[key] { return first }
            let result = MutationResult(operationID: mutation.operationID, outcome: apply(mutation, user: user))
            remembered[key] = result
            return result
        }
    }

    private func apply(_ mutation: Mutation, user: String) -> MutationOutcome {
        if mutation.kind.isEmpty { return .rejected(reason: "empty kind", permanent: true) }
        if mutation.recordID.isEmpty || mutation.recordID.utf8.count > 64 {
            return .rejected(reason: "record id must be 1 to 64 bytes of UTF-8", permanent: true)
        }
        if mutation.fields.keys.contains(where: \.isEmpty) { return .rejected(reason: "empty field name", permanent: true) }
        let key = RecordKey(kind: mutation.kind, id: mutation.recordID)
        let existing = table[key]
        if let existing, existing.owner != user {
            return .rejected(reason: "forbidden: \(key) belongs to another user", permanent: true)
        }
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        switch mutation.op {
        case .create:
            if let live { return .conflict(server: live) }
            let now = stamp(for: key)
            let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields, updatedAt: now)
            table[key] = Stored(row: row, owner: user)
            appliedCount += 1
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            row.fields.merge(mutation.fields) { _, new in new }
            row.updatedAt = stamp(for: key)
            table[key] = Stored(row: row, owner: user)
            appliedCount += 1
            return .applied(row)
        case .delete:
            guard let row = live else {
                // Deleting twice is harmless: the tombstone (or a fresh one) is the answer.
                if let existing { return .applied(existing.row) }
                let now = stamp(for: key)
                let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: now, deletedAt: now)
                table[key] = Stored(row: tombstone, owner: user)
                appliedCount += 1
                return .applied(tombstone)
            }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            let now = stamp(for: key)
            let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: now, deletedAt: now)
            table[key] = Stored(row: tombstone, owner: user)
            appliedCount += 1
            return .applied(tombstone)
        }
    }

    /// One page of `user`'s rows after each kind's cursor, in `(updatedAt, id)`
    /// order, kinds in name order. Cursors are in their wire form
    /// `updatedAt:id` (or `nil` for the start).
    ///
    /// - Throws: ``TransportError/permanent(reason:)`` for a malformed cursor or a bad limit.
    public func pull(user: String, cursors: [String: String?], limit: Int) throws(TransportError) -> PullPage {
        guard limit > 0 else { throw .permanent(reason: "limit must be positive") }
        var parsed: [String: PullCursor?] = [:]
        for (kind, text) in cursors {
            if let text {
                guard let cursor = PullCursor(wire: text) else { throw .permanent(reason: "malformed cursor \"\(text)\" for \(kind)") }
                parsed[kind] = .some(cursor)
            } else {
                parsed[kind] = .some(nil)
            }
        }
        var page: [ServerRow] = []
        for kind in parsed.keys.sorted() {
            let after = parsed[kind] ?? nil
            let candidates = table.values
                .filter { $0.owner == user && $0.row.kind == kind }
                .map(\.row)
                .filter { row in after.map { $0 < PullCursor(updatedAt: row.updatedAt, id: row.id) } ?? true }
                .sorted { PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id) }
            page += candidates.prefix(limit + 1 - page.count)
            if page.count > limit { break }
        }
        let hasMore = page.count > limit
        if hasMore { page.removeLast() }
        var next: [String: PullCursor] = [:]
        for row in page {
            next[row.kind] = PullCursor(updatedAt: row.updatedAt, id: row.id)
            sealed = max(sealed, row.updatedAt)
        }
        return PullPage(rows: page, nextCursors: next, hasMore: hasMore)
    }

    // MARK: Other writers and inspection

    /// Writes a row as another writer would (a chat adding a pin, another
    /// device): creates it or replaces its fields, with a fresh stamp.
    @discardableResult
    public func write(user: String, kind: String, id: String, fields: [String: FieldValue]) -> ServerRow {
        let key = RecordKey(kind: kind, id: id)
        let row = ServerRow(kind: kind, id: id, fields: fields, updatedAt: stamp(for: key))
        table[key] = Stored(row: row, owner: user)
        return row
    }

    /// Changes some fields of a live row as another writer would; `nil` if there is none.
    @discardableResult
    public func update(kind: String, id: String, changes: [String: FieldValue]) -> ServerRow? {
        let key = RecordKey(kind: kind, id: id)
        guard var stored = table[key], !stored.row.isTombstone else { return nil }
        stored.row.fields.merge(changes) { _, new in new }
        stored.row.updatedAt = stamp(for: key)
        table[key] = stored
        return stored.row
    }

    /// Deletes a row as another writer would (soft: a tombstone); `nil` if there is none.
    @discardableResult
    public func delete(kind: String, id: String) -> ServerRow? {
        let key = RecordKey(kind: kind, id: id)
        guard var stored = table[key], !stored.row.isTombstone else { return nil }
        let now = stamp(for: key)
        stored.row = ServerRow(kind: kind, id: id, updatedAt: now, deletedAt: now)
        table[key] = stored
        return stored.row
    }

    /// The live row (not a tombstone), if any.
    public func row(kind: String, id: String) -> ServerRow? {
        table[RecordKey(kind: kind, id: id)].flatMap { $0.row.isTombstone ? nil : $0.row }
    }

    /// `user`'s live rows of `kind`, by id.
    public func rows(user: String, kind: String) -> [ServerRow] {
        table.values.filter { $0.owner == user && $0.row.kind == kind && !$0.row.isTombstone }.map(\.row).sorted { $0.id < $1.id }
    }

    /// How many times the server applied an operation with this id (0 or 1).
    public func remembers(_ id: OperationID, user: String) -> Bool { remembered[Remembered(user: user, operationID: id)] != nil }
}

extension PullCursor {
    /// Parses the wire form `updatedAt:id` (the id may contain colons; the
    /// stamp is a decimal integer). `nil` when malformed.
    public init?(wire: String) {
        guard let colon = wire.firstIndex(of: ":") else { return nil }
        let stamp = wire[..<colon]
        let id = String(wire[wire.index(after: colon)...])
        guard !stamp.isEmpty, stamp.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }),
              let updatedAt = Int64(stamp), !id.isEmpty, id.utf8.count <= 64 else { return nil }
        self.init(updatedAt: updatedAt, id: id)
    }

    /// The wire form `updatedAt:id` (the same as ``description``).
    public var wire: String { description }
}

/// The transport to a ``ReferenceServer`` in the same process.
public struct ReferenceTransport: SyncTransport {
    /// The server.
    public let server: ReferenceServer
    /// The user the requests come from.
    public let user: String

    public func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        await server.push(user: user, mutations)
    }

    public func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let wire = request.cursors.mapValues { $0?.wire }
        return try await server.pull(user: user, cursors: wire, limit: request.limit)
    }
}
