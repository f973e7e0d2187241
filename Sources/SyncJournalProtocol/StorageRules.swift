/// What a push and a pull do, whatever the storage (`journals/PROTOCOL.md`,
/// "Push", "Pull"), over ``StorageQueries``. `sync-server`'s SQLite and
/// PostgreSQL storages and the in-memory reference server all decide with
/// these; they add only their transactions, locks and storage-specific checks.
package enum StorageRules {
    /// The refusal of a mutation no storage may apply, or `nil` when it is
    /// within the protocol's limits (``ProtocolLimits``): a kind of 1 to
    /// ``ProtocolLimits/maximumKindBytes`` bytes and a record id of 1 to
    /// ``ProtocolLimits/maximumRecordIDBytes`` bytes, neither holding U+0000;
    /// at most ``ProtocolLimits/maximumFieldsPerRecord`` fields with names of
    /// at most ``ProtocolLimits/maximumFieldNameBytes`` bytes; values nested
    /// at most `FieldValue.maximumNestingDepth` deep; attachments of a size of
    /// 0 or more and a `type/subtype` media type; a model version, when
    /// stated, of 1 to ``ProtocolLimits/maximumModelVersion`` (the wire
    /// refuses any other, so only an in-process caller gets this far with one). Every backend refuses
    /// the same mutations with the same reason, permanently, before it
    /// touches its tables.
    package static func refusal(of mutation: Mutation) -> MutationOutcome? {
        if let problem = ProtocolLimits.problem(kind: mutation.kind) ?? ProtocolLimits.problem(recordID: mutation.recordID)
            ?? ProtocolLimits.problem(fieldCount: mutation.fields.count, names: mutation.fields.keys)
            ?? FieldValue.problem(in: mutation.fields)
            ?? mutation.modelVersion.flatMap({ ProtocolLimits.problem(modelVersion: $0) }) {
            return .rejected(reason: problem, permanent: true)
        }
        return nil
    }

    /// The owner column of a row of `space` written or read for `user`:
    /// the user in the personal space, empty in a shared one (its records
    /// belong to the space, not to the member who wrote them).
    package static func owner(in space: SpaceID, user: String) -> String {
        space.isPersonal ? user : ""
    }

    /// Why `user` may not write into the space of `mutation`, or `nil` when
    /// it may: the personal space always, a shared space as an owner or an
    /// editor. The role is read through `queries`, in the transaction that
    /// applies the mutation, so a member removed a moment ago is refused.
    /// A non-member is told the same whether or not the space exists.
    package static func spaceRefusal<Queries: StorageQueries>(of mutation: Mutation, user: String,
                                                              _ queries: Queries) throws(Queries.Failure) -> MutationOutcome? {
        guard !mutation.space.isPersonal else { return nil }
        guard let role = try queries.role(of: user, in: mutation.space) else { return SpaceWriteRefusal.noAccess(mutation.space).outcome }
        if !role.canWrite { return SpaceWriteRefusal.readOnly(mutation.space).outcome }
        return nil
    }

    /// Applies one mutation of `user` for a server that remembers operation
    /// ids (the caller answers a resend from what it remembered, and
    /// remembers only applied results).
    ///
    /// - A record is named by its space, kind and id; in the personal space
    ///   each user has their own (two users may each hold `pin/p1`).
    /// - A mutation into a shared space needs the `owner` or `editor` role
    ///   (``spaceRefusal(of:user:_:)``); else it is rejected permanently.
    /// - A create of a live record, or an update or delete whose base is not
    ///   the stored stamp, is a conflict carrying the server's copy.
    /// - Deleting a deleted record is harmless: its tombstone is the answer.
    /// - Every write keeps on the row the highest model version that has
    ///   written the record (``ServerRow/modelVersion``): the stored one,
    ///   a tombstone's included, or the mutation's, whichever is higher.
    ///
    /// `mayBeForgotten` (see ``OperationRetention/mayBeForgotten(_:at:)``):
    /// the mutation is not remembered but may have been applied before its
    /// id was forgotten, so it is judged as by a server that keeps no
    /// operation ids. Only a create differs, as nothing else could apply
    /// twice (an applied update or delete moved the row's stamp off its
    /// base): a create of a live record is ``MutationOutcome/duplicate``
    /// (the device reads it back), and a create over a tombstone is
    /// a conflict with `nil` rather than a new row, so a resend never brings
    /// back a deleted record.
    ///
    /// A create whose id is the record's ``OwnedRow/createdBy`` was applied
    /// and forgotten, whatever `mayBeForgotten` says (a device clock far
    /// behind makes an old resend look recent): it is judged the same way.
    package static func apply<Queries: StorageQueries>(_ mutation: Mutation, user: String, mayBeForgotten: Bool = false,
                                                       _ queries: Queries) throws(Queries.Failure) -> MutationOutcome {
        if let refusal = refusal(of: mutation) { return refusal }
        return try applyWithinLimits(mutation, user: user, mayBeForgotten: mayBeForgotten, queries)
    }

    /// ``apply(_:user:_:)`` for a mutation the caller has already found
    /// within the limits (``refusal(of:)`` answered `nil`), so they are not
    /// checked twice.
    package static func applyWithinLimits<Queries: StorageQueries>(_ mutation: Mutation, user: String, mayBeForgotten: Bool = false,
                                                                   _ queries: Queries) throws(Queries.Failure) -> MutationOutcome {
        if let refusal = try spaceRefusal(of: mutation, user: user, queries) { return refusal }
        let key = mutation.key
        let owner = owner(in: key.space, user: user)
        let existing = try queries.row(key, owner: owner)
        let live = existing.flatMap { $0.row.isTombstone ? nil : $0.row }
        let previous = existing?.row.updatedAt
        let modelVersion = highestModelVersion(existing?.row.modelVersion, mutation.modelVersion)
        switch mutation.op {
        case .create:
            let operationID = mutation.operationID.description
            if let existing, mayBeForgotten || existing.createdBy == operationID {
                return live == nil ? .conflict(server: nil) : .duplicate
            }
            if let live { return .conflict(server: live) }
            if let missing = try missingContent(in: mutation.fields, user: user, queries) { return missing }
            let row = ServerRow(kind: key.kind, id: key.id, fields: mutation.fields,
                                updatedAt: try queries.nextStamp(after: previous, in: key.space), modelVersion: modelVersion, space: key.space)
            try queries.write(row, owner: owner, createdBy: operationID)
            return .applied(row)
        case .update:
            guard var row = live else { return .conflict(server: nil) }
            guard mutation.baseUpdatedAt == row.updatedAt else { return .conflict(server: row) }
            if let missing = try missingContent(in: mutation.fields, user: user, queries) { return missing }
            row.fields.merge(mutation.fields) { _, new in new }
            if row.fields.count > ProtocolLimits.maximumFieldsPerRecord {
                return .rejected(reason: "the update would leave \(row.fields.count) fields in \(key), at most \(ProtocolLimits.maximumFieldsPerRecord) in a record",
                                 permanent: true)
            }
            row.updatedAt = try queries.nextStamp(after: previous, in: key.space)
            row.modelVersion = modelVersion
            try queries.write(row, owner: owner, createdBy: existing?.createdBy)
            return .applied(row)
        case .delete:
            if let live, mutation.baseUpdatedAt != live.updatedAt { return .conflict(server: live) }
            // Deleting a deleted row is harmless: its tombstone is the answer.
            if live == nil, let existing { return .applied(existing.row) }
            let stamp = try queries.nextStamp(after: previous, in: key.space)
            let tombstone = ServerRow(kind: key.kind, id: key.id, updatedAt: stamp, deletedAt: stamp, modelVersion: modelVersion, space: key.space)
            // The tombstone keeps the create of the life it ends.
            try queries.write(tombstone, owner: owner, createdBy: existing?.createdBy)
            return .applied(tombstone)
        }
    }

    /// The push rule for attachments (journals/PROTOCOL.md, "Pushing a
    /// record that refers to a content"): a create or update whose own
    /// fields refer to a content `user` may not read is rejected, not
    /// permanently, naming the first such one; the client uploads it and
    /// sends the edit again. Judged only when the mutation would otherwise
    /// apply, so a conflict is answered as a conflict.
    package static func missingContent<Queries: StorageQueries>(in fields: [String: FieldValue], user: String,
                                                                _ queries: Queries) throws(Queries.Failure) -> MutationOutcome? {
        for content in AttachmentRules.contents(of: fields) where !(try queries.mayRead(content, user: user)) {
            return .rejected(reason: MissingContentRefusal.reason(content), permanent: false)
        }
        return nil
    }

    /// The live row `user` reads under `key` (journals/PROTOCOL.md, "Read"):
    /// `nil` for none, a tombstone, or a shared space `user` is not a member of.
    package static func read<Queries: StorageQueries>(_ key: RecordKey, user: String,
                                                      _ queries: Queries) throws(Queries.Failure) -> ServerRow? {
        if !key.space.isPersonal, try queries.role(of: user, in: key.space) == nil { return nil }
        guard let stored = try queries.row(key, owner: owner(in: key.space, user: user)), !stored.row.isTombstone else { return nil }
        return stored.row
    }

    /// The higher of two model versions, `nil` only when neither is stated.
    package static func highestModelVersion(_ first: Int?, _ second: Int?) -> Int? {
        guard let first else { return second }
        guard let second else { return first }
        return max(first, second)
    }

    /// Refuses a pull whose limit, kinds or cursors are malformed or over the
    /// protocol's limits (at most ``ProtocolLimits/maximumKindsPerPull``
    /// kinds, each within ``ProtocolLimits/problem(kind:)``), before any query.
    package static func validate(_ request: PullRequest, maximumLimit: Int = ProtocolLimits.maximumPullLimit) throws(PullRefusal) {
        guard request.limit >= 1, request.limit <= maximumLimit else {
            throw .badRequest("limit must be 1 to \(maximumLimit), not \(request.limit)")
        }
        if request.cursors.count > ProtocolLimits.maximumKindsPerPull {
            throw .badRequest("\(request.cursors.count) kinds, at most \(ProtocolLimits.maximumKindsPerPull) in one pull")
        }
        for (kind, cursor) in request.cursors {
            if let problem = ProtocolLimits.problem(kind: kind) { throw .badRequest(problem) }
            try validate(cursor ?? nil, kind: kind)
        }
        guard let spaces = request.spaces else { return }
        if spaces.count > ProtocolLimits.maximumSpacesPerUser {
            throw .badRequest("\(spaces.count) spaces, at most \(ProtocolLimits.maximumSpacesPerUser) in one pull")
        }
        for (space, held) in spaces {
            guard !space.isPersonal else { throw .badRequest("the personal space has no entry in spaces: its cursors are the request's") }
            for (kind, cursor) in held.cursors {
                guard request.cursors.keys.contains(kind) else {
                    throw .badRequest("space \(space) names kind \"\(kind.prefix(128))\", which the request's cursors do not")
                }
                try validate(cursor ?? nil, kind: kind)
            }
        }
    }

    private static func validate(_ cursor: PullCursor?, kind: String) throws(PullRefusal) {
        guard let cursor else { return }
        if cursor.id.isEmpty || cursor.id.utf8.count > ProtocolLimits.maximumRecordIDBytes {
            throw .badCursor(kind: kind, reason: "the cursor's id must be 1 to \(ProtocolLimits.maximumRecordIDBytes) bytes of UTF-8")
        }
        if cursor.id.utf8.contains(0) { throw .badCursor(kind: kind, reason: "the cursor's id must not contain U+0000") }
    }

    /// How many rows a pull reads first, before it knows their sizes.
    static let firstPullChunk = 128

    /// One page of `user`'s rows after each kind's cursor, read through
    /// `queries` inside one snapshot (journals/PROTOCOL.md, "Pull", "Pull
    /// across spaces"): the personal space first, then, when the request
    /// has ``PullRequest/spaces``, every shared space `user` is a member
    /// of in id order (one not named from its start); kinds in name order
    /// within a space, `(updatedAt, id)` within a kind; at most
    /// `request.limit` rows and about ``ProtocolLimits/pullPageByteBudget``
    /// bytes (at least one row).
    ///
    /// Memberships come in one read with each space's last stamp: a named
    /// space whose every cursor is at or past that stamp holds nothing new
    /// and is not read. The page describes each space whose version is
    /// newer than the request's (or that it does not name) and lists as
    /// lost each named space `user` is not a member of; both follow from
    /// the request alone, so every page of a pull carries the same.
    ///
    /// Refuses (with ``PullRefusal/cursorExpired(kinds:spaceKinds:)``, through
    /// ``StorageQueries/failure(_:)``) every kind whose cursor in any space
    /// read is behind that space's tombstone horizon, per space, unless the
    /// request is a resync. On the last page a kind that would stay behind its horizon
    /// gets the horizon as its cursor: nothing lies between, and a client
    /// left there would be refused for ever.
    package static func page<Queries: StorageQueries>(user: String, _ request: PullRequest,
                                                      _ queries: Queries) throws(Queries.Failure) -> PullPage {
        let kinds = request.cursors.keys.sorted()
        var sources = [PullSource(space: .personal, owner: user, cursors: request.cursors)]
        var described: [Space] = []
        var lost: [SpaceID] = []
        if let named = request.spaces {
            let standings = try queries.memberships(of: user)
            let joined = Set(standings.map(\.space))
            lost = named.keys.filter { !joined.contains($0) }.sorted(by: <)
            for standing in standings {
                let held = named[standing.space]
                if held?.version.map({ $0 < standing.version }) ?? true {
                    described.append(standing.description(members: try queries.members(of: standing.space)))
                }
                var cursors: [String: PullCursor?] = [:]
                for kind in kinds { cursors[kind] = .some(held?.cursors[kind] ?? nil) }
                // Stamps of a shared space are unique: a cursor at its last stamp has seen all of it.
                let current = held != nil && kinds.allSatisfy { (cursors[$0] ?? nil).map { $0.updatedAt >= standing.lastStamp } ?? false }
                if !current { sources.append(PullSource(space: standing.space, owner: "", cursors: cursors)) }
            }
        }
        var horizons: [SpaceID: [String: PullCursor]] = [:]
        var expired: [SpaceID: Set<String>] = [:]
        for source in sources {
            for kind in kinds {
                guard let horizon = try queries.horizon(kind: kind, in: source.space) else { continue }
                horizons[source.space, default: [:]][kind] = horizon
                if let cursor = source.cursors[kind] ?? nil, cursor < horizon { expired[source.space, default: []].insert(kind) }
            }
        }
        if !expired.isEmpty && !request.isResync {
            let personal = expired.removeValue(forKey: .personal) ?? []
            throw Queries.failure(.cursorExpired(kinds: personal.sorted(), spaceKinds: expired.mapValues { $0.sorted() }))
        }
        var draft = PullPageDraft(limit: request.limit)
        sources: for source in sources {
            for kind in kinds {
                if try !draft.fill(from: source, kind: kind, queries) { break sources }
            }
        }
        var page = draft.finished()
        if !page.hasMore {
            for source in sources {
                for kind in kinds {
                    guard let horizon = horizons[source.space]?[kind] else { continue }
                    let reached = source.space.isPersonal ? page.nextCursors[kind] : page.nextSpaceCursors[source.space]?[kind]
                    guard (reached ?? (source.cursors[kind] ?? nil)).map({ $0 < horizon }) ?? true else { continue }
                    if source.space.isPersonal {
                        page.nextCursors[kind] = horizon
                    } else {
                        page.nextSpaceCursors[source.space, default: [:]][kind] = horizon
                    }
                }
            }
        }
        page.spaces = described
        page.lostSpaces = lost
        return page
    }
}
