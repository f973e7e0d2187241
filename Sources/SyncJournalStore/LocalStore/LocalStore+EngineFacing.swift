import SyncJournalProtocol
import SyncJournalCore

// The half of a store only a sync engine calls: handing queued operations
// to a transport, keeping what the server said of them, and keeping pulled
// pages. Apps never call these (the engine keeps their order and in-flight
// marks consistent), so all of it has package access.
extension LocalStore {
    /// Up to `limit` operations to send next, in queue order: for each record
    /// only its first queued operation, and none of a record that has an
    /// operation in flight (a delete waits for its create's outcome).
    ///
    /// Operations in `excluding` (say, ones that failed earlier in this sync)
    /// are skipped, and so is the rest of their record's queue.
    package func operationsReadyToSend(limit: Int, excluding: Set<OperationID> = []) throws(StoreError) -> [OutboxOperation] {
        try checkWritable()
        return Self.ready(in: state.outbox, limit: limit, inFlight: inFlight, excluding: excluding)
    }

    /// The rule of ``operationsReadyToSend(limit:excluding:)`` over `outbox`.
    static func ready(in outbox: Outbox, limit: Int, inFlight: Set<OperationID>, excluding: Set<OperationID>) -> [OutboxOperation] {
        guard limit > 0 else { return [] }
        var ready: [OutboxOperation] = []
        // Between rounds nothing is in flight and nothing was refused: those
        // two lookups per operation are skipped then.
        let checkInFlight = !inFlight.isEmpty
        let checkExcluded = !excluding.isEmpty
        // The first operation of each record decides: a quarantined one
        // holds its record's later operations back, and only those.
        outbox.forEachFirstOfRecord { entry in
            if !entry.quarantined,
               !checkInFlight || !inFlight.contains(entry.id), !checkExcluded || !excluding.contains(entry.id) {
                ready.append(entry)
            }
            return ready.count < limit
        }
        return ready
    }

    /// Picks up to `limit` operations ready to send (as
    /// ``operationsReadyToSend(limit:excluding:)`` does), journals durably
    /// that those never sent before may reach the server, and marks them all
    /// in flight: one write for the whole hand-over.
    ///
    /// The batch is picked against the staged state as the write is formed,
    /// so an operation the user cancelled or merged in the meantime is never
    /// handed over, and the operations returned are as the journal now holds them.
    package func beginSending(limit: Int, excluding: Set<OperationID>) async throws(StoreError) -> SendingBatch {
        let draft = SendingBatchDraft()
        let busy = inFlight
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            var picked = Self.ready(in: staged.outbox, limit: limit, inFlight: busy, excluding: excluding)
            var unsent: [OperationID] = []
            for index in picked.indices where !picked[index].sent {
                unsent.append(picked[index].id)
                picked[index].sent = true
            }
            draft.batch = SendingBatch(operations: picked, newlyMarked: unsent)
            return unsent.isEmpty ? [] : [.sent(unsent)]
        }
        for entry in draft.batch.operations { inFlight.insert(entry.id) }
        if !suspension.abandoned.isEmpty { suspension.abandoned.subtract(draft.batch.operations.map(\.id)) }
        return draft.batch
    }

    /// Keeps the outcomes of one push request (as
    /// ``recordOutcomes(_:)`` does: checked whole, then journaled in one
    /// write) and ends the hand-over of `ids`: they are no longer in flight,
    /// whether or not the outcomes could be kept.
    ///
    /// - Returns: the conflicts kept, and which operations of `outcomes` are quarantined now.
    @discardableResult
    package func endSending(_ ids: [OperationID], outcomes: [(OperationID, DeliveryOutcome)]) async throws(StoreError) -> SendingEnd {
        defer { inFlight.subtract(ids) }
        try checkWritable()
        let outcomes = keepingUnabandoned(ids, outcomes)
        let conflicts = outcomes.isEmpty ? 0 : try await recordOutcomes(outcomes)
        var quarantined = Set<OperationID>()
        for case (let id, .failure) in outcomes where state.outbox[id]?.quarantined == true { quarantined.insert(id) }
        return SendingEnd(conflicts: conflicts, quarantined: quarantined)
    }

    /// Records durably that `ids` may reach the server, then marks them in
    /// flight, and returns the operations to hand to the transport: those of
    /// `ids` still queued. One the user cancelled meanwhile (a create never
    /// sent, then deleted) is left out, so it is never sent.
    @discardableResult
    package func beginSending(_ ids: [OperationID]) async throws(StoreError) -> [OutboxOperation] {
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            let unsent = ids.filter { staged.outbox[$0].map { !$0.sent } ?? false }
            return unsent.isEmpty ? [] : [.sent(unsent)]
        }
        // Decided against the state after this call's batch: an operation
        // removed earlier in the batch is gone, every other one is now sent.
        let accepted = ids.compactMap { id in state.outbox[id].flatMap { $0.sent ? $0 : nil } }
        inFlight.formUnion(accepted.map(\.id))
        if !suspension.abandoned.isEmpty { suspension.abandoned.subtract(accepted.map(\.id)) }
        return accepted
    }

    /// The transport reported `ids` never left the device (it was offline):
    /// they stop being in flight, and those this hand-over had newly marked
    /// sent are unsent again, so the state is as it was before the attempt.
    package func withdrawSending(_ ids: [OperationID], newlyMarked: Set<OperationID>) async throws(StoreError) {
        inFlight.subtract(ids)
        // One abandoned by a suspension may have been sent by another
        // process meanwhile: it stays marked sent.
        let revert = ids.filter { newlyMarked.contains($0) && !suspension.abandoned.contains($0) }
        if !suspension.abandoned.isEmpty { suspension.abandoned.subtract(ids) }
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            let sent = revert.filter { staged.outbox[$0]?.sent == true }
            return sent.isEmpty ? [] : [.withdrawn(sent)]
        }
    }

    /// Keeps the outcomes of one push reply together: every outcome is
    /// checked first (rows of the right record, valid ids and fields), and
    /// only then are they all journaled, in one write. A reply with any
    /// malformed part is refused whole.
    ///
    /// - Returns: the number of conflicts kept (merges that lost nothing are not conflicts).
    @discardableResult
    package func recordOutcomes(_ outcomes: [(OperationID, DeliveryOutcome)]) async throws(StoreError) -> Int {
        let policies = options.conflictPolicies
        let defaultPolicy = options.defaultConflictPolicy
        let limit = options.maximumPermanentFailures
        let now = options.clock.wallTimeMilliseconds
        // Conflicts for the app; merges that lost nothing are not counted.
        var kept = 0
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            kept = 0
            var events: [StoreEvent] = []
            var acks: [Acknowledgement] = []
            // Outcomes of operations no longer queued (a late duplicate reply) are ignored.
            acks.reserveCapacity(outcomes.count)
            for (index, (id, outcome)) in outcomes.enumerated() {
                if case .acknowledged(let row) = outcome {
                    // An acknowledgement needs only the operation's record, read
                    // in place: the common outcome copies no queued entry.
                    guard let key = staged.outbox.key(of: id) else { continue }
                    try Self.check(row, for: key, index: index)
                    acks.append(Acknowledgement(operationID: id, row: row))
                    continue
                }
                guard let entry = staged.outbox[id] else { continue }
                switch outcome {
                case .acknowledged:
                    break
                case .conflicted(let server):
                    if let server { try Self.check(server, for: entry.key, index: index) }
                    let input = Self.conflictInput(entry, server: server, in: staged)
                    let resolution = ConflictResolution.resolve(input, policy: policies[entry.operation.entity] ?? defaultPolicy,
                                                                newID: .random(), now: now)
                    events.append(.conflictResolved(id, server: server, base: input.base, resolution: resolution))
                    if !ConflictRecord(operation: entry.operation, server: server, resolution: resolution).isMerge { kept += 1 }
                case .failure(let kind, let reason):
                    events.append(Self.failure(entry, kind: kind, reason: reason, limit: limit))
                case .refused(let reason):
                    // The failure record's permanent form: replay moves the
                    // operation to the rejections, as it always has.
                    events.append(.failed(id, reason: reason, permanent: true))
                }
            }
            if !acks.isEmpty { events.insert(.acknowledged(acks), at: 0) }
            return events
        }
        return kept
    }

    /// The failure event for `entry`: quarantined once its permanent failures
    /// reach `limit`, or at once when the row is gone.
    static func failure(_ entry: OutboxOperation, kind: FailureKind, reason: String, limit: Int) -> StoreEvent {
        let permanent = entry.permanentFailures + (kind == .transient ? 0 : 1)
        let quarantine = kind == .deletedOrNoAccess || (kind == .permanent && permanent >= limit)
        return .attemptFailed(entry.id, kind: kind, reason: reason, quarantine: quarantine)
    }

    /// What a conflict policy is given: the operation, the base copy the
    /// device had, the server's copy, and the record as the device showed it.
    static func conflictInput(_ entry: OutboxOperation, server: ServerRow?, in staged: StoreState) -> ConflictInput {
        let base = staged.baseRow(for: entry)
        let operation = entry.operation
        var local: [String: FieldValue]?
        switch operation.kind {
        case .create: local = operation.fields
        case .update: local = (base?.fields ?? staged.snapshot[entry.key]?.fields ?? [:]).merging(operation.fields) { _, new in new }
        case .delete: local = nil
        }
        return ConflictInput(operation: operation, base: base, server: server, local: local)
    }

    /// Throws unless `row` is a valid server copy of the record `key`.
    private static func check(_ row: ServerRow, for key: RecordKey, index: Int) throws(StoreError) {
        if let problem = problem(with: row) { throw .invalidServerData(kind: row.kind, index: index, reason: problem) }
        if row.key != key { throw .invalidServerData(kind: row.kind, index: index, reason: "reply for another record (\(row.key))") }
    }

    /// The transport answered (or failed) for `ids`: they are no longer in flight.
    package func finishSending(_ ids: [OperationID]) {
        inFlight.subtract(ids)
        if !suspension.abandoned.isEmpty { suspension.abandoned.subtract(ids) }
    }

    /// `outcomes` without those of operations a suspension abandoned (see
    /// ``suspend()``): they stay queued and go again. Ends the abandonment of `ids`.
    private func keepingUnabandoned(_ ids: [OperationID], _ outcomes: [(OperationID, DeliveryOutcome)]) -> [(OperationID, DeliveryOutcome)] {
        guard !suspension.abandoned.isEmpty else { return outcomes }
        let kept = outcomes.filter { !suspension.abandoned.contains($0.0) }
        suspension.abandoned.subtract(ids)
        suspension.abandoned.subtract(outcomes.map(\.0))
        return kept
    }

    /// Keeps a page of pulled rows of `kind` and the cursor after it, together.
    /// Rows never overwrite queued local edits: the edits stay on top.
    ///
    /// - Throws: ``StoreError/invalidServerData(kind:index:reason:)`` for a row
    ///   of another kind, an empty or over-long id, a duplicate id, an empty
    ///   field name, or a cursor behind the current one; the old snapshot and
    ///   cursor are kept.
    package func applyPulledPage(kind: String, rows: [ServerRow], cursor: PullCursor?) async throws(StoreError) {
        try await applyPulledPages([PulledKindPage(kind: kind, rows: rows, cursor: cursor)])
    }

    /// Keeps a pulled page that spans several kinds: one record per kind, all
    /// in one journal write. Every kind is validated before anything is kept.
    package func applyPulledPages(_ pages: [PulledKindPage]) async throws(StoreError) {
        for page in pages {
            let kind = page.kind
            if kind.isEmpty { throw .emptyKind }
            var ids = Set<String>()
            for (index, row) in page.rows.enumerated() {
                if row.kind != kind { throw .invalidServerData(kind: kind, index: index, reason: "row of kind \"\(row.kind)\"") }
                if row.space != page.space {
                    throw .invalidServerData(kind: kind, index: index, reason: "row of space \(row.space) in a page of space \(page.space)")
                }
                if let problem = Self.problem(with: row) { throw .invalidServerData(kind: kind, index: index, reason: problem) }
                if !ids.insert(row.id).inserted { throw .invalidServerData(kind: kind, index: index, reason: "duplicate id \"\(row.id)\"") }
            }
        }
        struct KindInSpace: Hashable { var kind: String; var space: SpaceID }
        if Set(pages.map { KindInSpace(kind: $0.kind, space: $0.space) }).count != pages.count {
            throw .invalidServerData(kind: pages.first?.kind ?? "", index: 0, reason: "a kind appears twice in one space of one page")
        }
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            var events: [StoreEvent] = []
            for page in pages {
                let current = page.space.isPersonal ? staged.cursors[page.kind] : staged.spaceCursors[page.space]?[page.kind]
                if let cursor = page.cursor, let current, cursor < current {
                    throw .invalidServerData(kind: page.kind, index: page.rows.count, reason: "cursor \(cursor) is behind \(current)")
                }
                if page.rows.isEmpty && page.cursor == nil { continue }
                // Rows of a space the user is no longer a member of never come
                // back: the loss was journaled first, from this very page.
                if !page.space.isPersonal && staged.spaces[page.space] == nil { continue }
                events += Self.pulledEvents(kind: page.kind, rows: page.rows, cursor: page.cursor, space: page.space)
            }
            return events
        }
    }

    /// Keeps what a pull said about the shared spaces, in one journal write
    /// before the page's rows: each description newer than the one held, and
    /// the loss of each space the user is no longer a member of (its rows and
    /// cursors leave, its queued edits become rejections). Applying the same
    /// again writes nothing.
    package func applySpaces(described: [Space], lost: [SpaceID]) async throws(StoreError) {
        for space in described where space.id.isPersonal {
            throw .invalidServerData(kind: "", index: 0, reason: "a description of the personal space")
        }
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            var events: [StoreEvent] = []
            for space in described where staged.spaces[space.id] != space { events.append(.spaceDescribed(space)) }
            for space in Set(lost).sorted(by: <) where !space.isPersonal && staged.holdsAnything(of: space) {
                events.append(.spaceLost(space))
            }
            return events
        }
    }

    /// Per shared space the device holds, what a pull across spaces names:
    /// the version of its description and its cursors of `kinds`.
    package func spaceCursors(for kinds: [String]) throws(StoreError) -> [SpaceID: SpaceCursors] {
        try checkReadable()
        var result: [SpaceID: SpaceCursors] = [:]
        for (id, space) in state.spaces {
            let held = state.spaceCursors[id] ?? [:]
            var cursors: [String: PullCursor?] = [:]
            for kind in kinds { cursors[kind] = .some(held[kind]) }
            result[id] = SpaceCursors(version: space.version, cursors: cursors)
        }
        return result
    }

    /// A page as journal events: one record, or several when its rows would
    /// not fit in one, with the cursor in the last (all in one write; a crash
    /// between them keeps rows without the cursor, which the next pull fetches again).
    static func pulledEvents(kind: String, rows: [ServerRow], cursor: PullCursor?, space: SpaceID = .personal) -> [StoreEvent] {
        let whole = StoreEvent.pulled(kind: kind, rows: rows, cursor: cursor, space: space)
        let budget = JournalFormat.maximumPayloadLength / 2
        guard rows.count > 1, whole.encodedPayload().count > budget else { return [whole] }
        var events: [StoreEvent] = []
        var chunk: [ServerRow] = []
        var bytes = 0
        for row in rows {
            var writer = ByteWriter()
            row.encode(into: &writer)
            if !chunk.isEmpty && bytes + writer.bytes.count > budget {
                events.append(.pulled(kind: kind, rows: chunk, cursor: nil, space: space))
                chunk = []
                bytes = 0
            }
            chunk.append(row)
            bytes += writer.bytes.count
        }
        events.append(.pulled(kind: kind, rows: chunk, cursor: cursor, space: space))
        return events
    }

    /// The pull cursors of `kinds` (`nil` for a kind never pulled).
    package func cursors(for kinds: [String]) throws(StoreError) -> [String: PullCursor?] {
        try checkReadable()
        var result: [String: PullCursor?] = [:]
        for kind in kinds { result[kind] = .some(state.cursors[kind]) }
        return result
    }

    /// Why a server row cannot be kept, or `nil` when it can.
    package static func problem(with row: ServerRow) -> String? {
        if row.kind.isEmpty { return "empty kind" }
        if row.id.isEmpty { return "missing or empty id" }
        if row.id.utf8.count > JournalOperation.maximumRecordIDLength { return "id of \(row.id.utf8.count) bytes, at most \(JournalOperation.maximumRecordIDLength)" }
        if let version = row.modelVersion, let problem = ProtocolLimits.problem(modelVersion: version) { return problem }
        return FieldValue.problem(in: row.fields)
    }

    /// Replaces the snapshot of `kind` with a full re-pull (a resync after
    /// the server's tombstone horizon passed the cursor): `rows` are every
    /// row the server has now, rows the device holds that are not among them
    /// are forgotten, and the cursor is set (it may be behind the old one).
    /// Queued edits stay on top. One journal write; a crash part-way keeps
    /// the old cursor, so the next sync resyncs again.
    package func replaceSnapshot(kind: String, rows: [ServerRow], cursor: PullCursor?,
                                 space: SpaceID = .personal) async throws(StoreError) {
        if kind.isEmpty { throw .emptyKind }
        var ids = Set<String>()
        for (index, row) in rows.enumerated() {
            if row.kind != kind { throw .invalidServerData(kind: kind, index: index, reason: "row of kind \"\(row.kind)\"") }
            if row.space != space {
                throw .invalidServerData(kind: kind, index: index, reason: "row of space \(row.space) in a re-pull of space \(space)")
            }
            if let problem = Self.problem(with: row) { throw .invalidServerData(kind: kind, index: index, reason: problem) }
            if !ids.insert(row.id).inserted { throw .invalidServerData(kind: kind, index: index, reason: "duplicate id \"\(row.id)\"") }
        }
        try await submit(sharesState: false) { (staged) throws(StoreError) in
            // A space lost while its re-pull ran stays lost.
            if !space.isPersonal && staged.spaces[space] == nil { return [] }
            return Self.replacementEvents(kind: kind, rows: rows, cursor: cursor, space: space, in: staged)
        }
    }

    /// The events that replace the snapshot of `kind` in `state`, in the
    /// order they are journaled. A full re-pull can be larger than one
    /// record, so these are several records and a power cut can keep any
    /// prefix of them: the rows first, then the ids forgotten, the cursor
    /// last. Every prefix short of the last keeps the old (expired) cursor,
    /// and, after a server change, the unadopted server record, so the next
    /// sync replaces the snapshot again.
    package static func replacementEvents(kind: String, rows: [ServerRow], cursor: PullCursor?, space: SpaceID = .personal,
                                          in state: StoreState) -> [StoreEvent] {
        let ids = Set(rows.map(\.id))
        let gone = state.snapshot.keys.filter { $0.kind == kind && $0.space == space && !ids.contains($0.id) }.map(\.id).sorted()
        var events = rows.isEmpty ? [] : pulledEvents(kind: kind, rows: rows, cursor: nil, space: space)
        if !gone.isEmpty { events.append(.forgotten(kind: kind, ids: gone, space: space)) }
        events.append(.pulled(kind: kind, rows: [], cursor: cursor, space: space))
        return events
    }

    /// Sets the callback made, on the store's thread, after each local edit
    /// is durable: how a sync engine learns that there is work. It must not
    /// block and must cost the same however much is queued (the engine takes
    /// the schedule's step under a lock and nothing else): every edit runs
    /// it before returning, and never waits for the engine itself. One
    /// observer per store.
    package func setEditObserver(_ observer: (@Sendable () -> Void)?) {
        editObserver = observer
    }

    func notifyEditObserver() {
        editObserver?()
    }
}
