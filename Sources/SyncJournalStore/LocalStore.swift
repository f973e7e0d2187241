import SyncJournalCore
import SyncJournalProtocol

/// The store an app talks to: one per journal (that is, per server endpoint
/// and account).
///
/// Every change is journaled durably **before** the view changes (disk before
/// screen): if the append fails, the call throws and neither the view nor the
/// outbox changes. Reads show the last server snapshot with the queued edits
/// applied on top.
///
/// ```swift
/// let store = try await LocalStore.open(path: "journals/pins.journal")
/// let id = try await store.create("pin", fields: ["name": .string("Tapas bar")])
/// try await store.update("pin", id: id, changes: ["visited": .bool(true)])
/// let pin = try await store.record("pin", id: id)      // shows both edits
/// try await store.delete("pin", id: id)                // never sent: both vanish
/// ```
///
/// Concurrent calls are journaled in arrival order; calls that arrive while
/// an append is being synced share the next write and `fdatasync`.
public actor LocalStore {
    /// How a store is opened.
    public struct Options: Sendable {
        /// The system-call layer (a fault injector in tests).
        public var system: any SystemCalls
        /// The clock for `queuedAt` stamps.
        public var clock: any TimeSource
        /// Checkpoint once the journal holds this many records more than the
        /// live state needs (0 turns automatic checkpoints off).
        public var checkpointThreshold: Int
        /// Makes ids for records created without one.
        public var makeRecordID: @Sendable () -> String
        /// The conflict policy of each kind; kinds not named use ``defaultConflictPolicy``.
        public var conflictPolicies: [String: ConflictPolicy]
        /// The policy of kinds without one of their own (server wins).
        public var defaultConflictPolicy: ConflictPolicy
        /// Permanent failures an operation may have before it is quarantined
        /// (at least 1). Transient failures never count.
        public var maximumPermanentFailures: Int
        /// How far ahead of its appends the journal is extended with zeros
        /// (``JournalWriter/Options/preallocationBytes``; 0: never).
        public var preallocationBytes: Int

        /// Default options: real system calls and clock, checkpoint past
        /// 10,000 dead records, server wins, quarantine after 3 permanent
        /// failures, the journal preallocated 1 MiB at a time.
        public init(system: any SystemCalls = PosixSystemCalls(), clock: any TimeSource = SystemTimeSource(),
                    checkpointThreshold: Int = 10_000,
                    makeRecordID: @escaping @Sendable () -> String = { OperationID.random().description },
                    conflictPolicies: [String: ConflictPolicy] = [:], defaultConflictPolicy: ConflictPolicy = .serverWins,
                    maximumPermanentFailures: Int = 3, preallocationBytes: Int = 1 << 20) {
            self.system = system
            self.clock = clock
            self.checkpointThreshold = checkpointThreshold
            self.makeRecordID = makeRecordID
            self.conflictPolicies = conflictPolicies
            self.defaultConflictPolicy = defaultConflictPolicy
            self.maximumPermanentFailures = max(1, maximumPermanentFailures)
            self.preallocationBytes = max(0, preallocationBytes)
        }
    }

    /// The journal's path.
    public nonisolated let path: String
    private var options: Options
    private var writer: JournalWriter?
    /// The durable state: what the app sees.
    private var state: StoreState
    /// `state` plus the events of the batch being written: what the next
    /// change is decided against. Kept separately (not copied per batch) so
    /// an edit costs the same with 10 or 100,000 records.
    private var staged: StoreState
    /// Operations handed to a transport and awaiting a reply. Memory only:
    /// after a restart nothing is in flight.
    private var inFlight: Set<OperationID> = []
    private var currentStatus: StoreStatus
    /// The journal error that failed the store, given to every later write.
    private var writerFailure: JournalError?
    /// Records in the journal file, to decide when a checkpoint pays off.
    private var journalRecords: Int
    private var pending: [Request] = []
    private var flushing = false
    /// What opening found: a repaired torn tail, the records replayed.
    public nonisolated let recovery: JournalRecovery?
    /// Callers of ``outcome(of:)`` waiting per operation.
    private var outcomeWaiters: [OperationID: [CheckedContinuation<SettledOutcome, Never>]] = [:]
    /// Outcomes of operations that left the queue recently (memory only), so
    /// a caller that asks just after the outcome still gets it.
    private var recentOutcomes: [OperationID: SettledOutcome] = [:]
    private var recentOrder: [OperationID] = []
    private var observers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
    private var nextObserver = 0
    private var editObserver: (@Sendable () async -> Void)?

    /// How an operation left the queue, as the store remembers it.
    private enum SettledOutcome {
        case final(OperationOutcome)
        /// Merged into another queued operation by compaction: its outcome is that one's.
        case coalesced(into: OperationID)
    }

    private init(path: String, options: Options, writer: JournalWriter?, state: StoreState, status: StoreStatus,
                 journalRecords: Int, recovery: JournalRecovery?) {
        self.path = path
        self.options = options
        self.writer = writer
        self.state = state
        staged = state
        currentStatus = status
        self.journalRecords = journalRecords
        self.recovery = recovery
    }

    // MARK: Opening

    /// Opens the store on the journal at `path`, creating it if needed, and
    /// rebuilds the state by replaying the journal.
    ///
    /// A journal that is corrupt, not a journal, or of a newer format opens
    /// the store in ``StoreStatus/unreadable(reason:)``: nothing is written
    /// to it. A torn tail (a crash mid-append) is repaired.
    ///
    /// - Throws: ``StoreError/journal(_:)`` when the journal is locked by
    ///   another store or cannot be opened at all.
    public static func open(path: String, options: Options = Options()) async throws(StoreError) -> LocalStore {
        // Replay folds the records the writer's recovery scan reads: one pass over the file.
        let replay = ReplayDuringOpen()
        let writer: JournalWriter
        do {
            writer = try await JournalWriter.open(path: path, options: .init(mode: .groupCommit, system: options.system,
                                                                             visitRecord: { replay.fold($0) },
                                                                             preallocationBytes: options.preallocationBytes,
                                                                             understands: StoreEvent.isUnderstood))
        } catch {
            switch error {
            case .corrupt, .notAJournal, .unsupportedVersion, .unsupported:
                return LocalStore(path: path, options: options, writer: nil, state: StoreState(),
                                  status: .unreadable(reason: error.description), journalRecords: 0, recovery: nil)
            default:
                throw .journal(error)
            }
        }
        let replayed: (state: StoreState, records: Int)
        do {
            replayed = try replay.finish(header: writer.header)
        } catch {
            try? await writer.close()
            return LocalStore(path: path, options: options, writer: nil, state: StoreState(),
                              status: .unreadable(reason: error.description), journalRecords: 0, recovery: nil)
        }
        return LocalStore(path: path, options: options, writer: writer, state: replayed.state, status: .ready,
                          journalRecords: replayed.records, recovery: writer.recovery)
    }

    /// Copies what is readable of the journal at `path` into a new journal at
    /// `destination` and leaves the original untouched (see ``JournalSalvage``).
    public static func salvage(path: String, to destination: String, includeRecordsAfterDamage: Bool = false,
                               system: any SystemCalls = PosixSystemCalls()) async throws -> JournalSalvage.Result {
        try await JournalSalvage.salvage(from: path, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage, system: system)
    }

    /// Salvages this store's journal into `destination` (the store stays as it is).
    public func salvage(to destination: String, includeRecordsAfterDamage: Bool = false) async throws -> JournalSalvage.Result {
        try await Self.salvage(path: path, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage, system: options.system)
    }

    // MARK: Status and reads

    /// Ready, unreadable, failed, retired or closed.
    public var status: StoreStatus { currentStatus }

    private func checkReadable() throws(StoreError) {
        switch currentStatus {
        case .ready, .failed: return
        case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
        case .retired: throw .retired
        case .closed: throw .closed
        }
    }

    private func checkWritable() throws(StoreError) {
        switch currentStatus {
        case .ready: return
        case .failed: throw .journal(writerFailure ?? .closed(path: path))
        case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
        case .retired: throw .retired
        case .closed: throw .closed
        }
    }

    /// The record as the app sees it, or `nil` if it does not exist or is deleted.
    public func record(_ kind: String, id: String) throws(StoreError) -> StoreRecord? {
        try checkReadable()
        return makeRecord(RecordKey(kind: kind, id: id))
    }

    /// Every visible record of `kind`, ordered by id.
    public func records(_ kind: String) throws(StoreError) -> [StoreRecord] {
        try checkReadable()
        var keys = Set(state.snapshot.keys.filter { $0.kind == kind })
        for key in state.outbox.keys where key.kind == kind { keys.insert(key) }
        return keys.sorted().compactMap(makeRecord)
    }

    private func makeRecord(_ key: RecordKey) -> StoreRecord? {
        guard let fields = state.visibleFields(of: key) else { return nil }
        return StoreRecord(kind: key.kind, id: key.id, fields: fields, serverUpdatedAt: state.snapshot[key]?.updatedAt,
                           hasPendingChanges: !state.outbox.operations(on: key).isEmpty)
    }

    /// The queued operations, in order, with their delivery state.
    public func pendingOperations() throws(StoreError) -> [OutboxOperation] {
        try checkReadable()
        return state.outbox.operations
    }

    /// The outbox in queue order with each operation's delivery state
    /// (queued, in flight, sent, quarantined), attempts and last error. Next
    /// attempt times are the engine's (``SyncEngine/outboxStatus()``).
    public func outboxStatus() throws(StoreError) -> [OutboxEntryStatus] {
        try checkReadable()
        return state.outbox.operations.map { OutboxEntryStatus($0, inFlight: inFlight.contains($0.id)) }
    }

    /// Whether `id` is handed to a transport right now (memory only).
    public func isInFlight(_ id: OperationID) -> Bool { inFlight.contains(id) }

    /// Conflicts waiting for the app.
    public func conflicts() throws(StoreError) -> [ConflictRecord] {
        try checkReadable()
        return state.conflicts
    }

    /// Quarantined operations, in queue order: each waits for
    /// ``retryQuarantined(_:)`` or ``discardQuarantined(_:)``, and later
    /// operations on its record wait behind it.
    public func quarantinedOperations() throws(StoreError) -> [OutboxOperation] {
        try checkReadable()
        var result: [OutboxOperation] = []
        state.outbox.forEach { entry in
            if entry.quarantined { result.append(entry) }
            return true
        }
        return result
    }

    /// The queued operations on one record, in order (a create's id is here, to await its outcome).
    public func pendingOperations(kind: String, id: String) throws(StoreError) -> [OutboxOperation] {
        try checkReadable()
        return state.outbox.operations(on: RecordKey(kind: kind, id: id))
    }

    /// Rejections journaled by versions before quarantine existed.
    public func rejections() throws(StoreError) -> [RejectionRecord] {
        try checkReadable()
        return state.rejections
    }

    /// The pull cursor of `kind`, if anything was pulled.
    public func cursor(for kind: String) throws(StoreError) -> PullCursor? {
        try checkReadable()
        return state.cursors[kind]
    }

    /// The whole state (for tools and tests).
    public func currentState() throws(StoreError) -> StoreState {
        try checkReadable()
        return state
    }

    // MARK: Edits

    /// Creates a record and returns its id (a new random one when `id` is nil).
    ///
    /// - Throws: ``StoreError/recordAlreadyExists(_:)`` when the app can see
    ///   a record with that id; validation errors; ``StoreError/journal(_:)``.
    @discardableResult
    public func create(_ kind: String, id: String? = nil, fields: [String: FieldValue]) async throws(StoreError) -> String {
        let recordID = id ?? options.makeRecordID()
        try Self.validate(kind: kind, id: recordID, fields: fields)
        let now = options.clock.nowMilliseconds()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: recordID)
            if staged.visibleFields(of: key) != nil { throw .recordAlreadyExists(key) }
            // A record created here has no base until the server confirms it.
            let operation = JournalOperation(id: .random(), kind: .create, entity: kind, recordID: recordID,
                                             fields: fields, baseUpdatedAt: nil, queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return recordID
    }

    /// Changes some fields of a visible record and returns the operation's
    /// id (to await with ``outcome(of:)``).
    @discardableResult
    public func update(_ kind: String, id: String, changes: [String: FieldValue]) async throws(StoreError) -> OperationID {
        try Self.validate(kind: kind, id: id, fields: changes)
        let now = options.clock.nowMilliseconds()
        let operationID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id)
            guard staged.visibleFields(of: key) != nil else { throw .recordNotFound(key) }
            let operation = JournalOperation(id: operationID, kind: .update, entity: kind, recordID: id, fields: changes,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return operationID
    }

    /// Deletes a visible record and returns the operation's id. Only a record
    /// the app can see can be deleted.
    @discardableResult
    public func delete(_ kind: String, id: String) async throws(StoreError) -> OperationID {
        try Self.validate(kind: kind, id: id, fields: [:])
        let now = options.clock.nowMilliseconds()
        let operationID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            let key = RecordKey(kind: kind, id: id)
            guard staged.visibleFields(of: key) != nil else { throw .recordNotFound(key) }
            let operation = JournalOperation(id: operationID, kind: .delete, entity: kind, recordID: id,
                                             baseUpdatedAt: staged.base(for: key), queuedAt: now)
            return [Self.edit(operation, in: staged)]
        }
        await notifyEditObserver()
        return operationID
    }

    /// The edit event for `operation`, with the compaction it causes.
    static func edit(_ operation: JournalOperation, in staged: StoreState) -> StoreEvent {
        let steps = Compactor.steps(for: operation, after: staged.outbox.operations(on: operation.key))
        // Compaction only saves work; when a merge would not fit in one
        // record, both edits stay queued as they are. (Without steps the edit
        // was already checked against the limit by `validate`.)
        let compacted = StoreEvent.edit(operation, compaction: steps)
        if !steps.isEmpty, compacted.encodedPayload().count > JournalFormat.maximumPayloadLength { return .edit(operation, compaction: []) }
        return compacted
    }

    static func validate(kind: String, id: String, fields: [String: FieldValue]) throws(StoreError) {
        if kind.isEmpty { throw .emptyKind }
        if id.isEmpty { throw .invalidRecordID(id, reason: "empty") }
        if id.utf8.count > JournalOperation.maximumRecordIDLength {
            throw .invalidRecordID(id, reason: "\(id.utf8.count) UTF-8 bytes, at most \(JournalOperation.maximumRecordIDLength)")
        }
        if fields.keys.contains(where: \.isEmpty) { throw .invalidFields(kind: kind, id: id, reason: "empty field name") }
        let size = JournalOperation(id: OperationID(bytes: Array(repeating: 0, count: 16))!, kind: .create, entity: kind,
                                    recordID: id, fields: fields, queuedAt: 0).encoded().count
        if size > JournalFormat.maximumPayloadLength / 2 {
            throw .invalidFields(kind: kind, id: id, reason: "\(size) bytes, more than a record may hold")
        }
    }

    // MARK: What the sync engine calls

    /// Up to `limit` operations to send next, in queue order: for each record
    /// only its first queued operation, and none of a record that has an
    /// operation in flight (a delete waits for its create's outcome).
    ///
    /// Operations in `excluding` (say, ones that failed earlier in this sync)
    /// are skipped, and so is the rest of their record's queue.
    public func operationsReadyToSend(limit: Int, excluding: Set<OperationID> = []) throws(StoreError) -> [OutboxOperation] {
        try checkWritable()
        var seen = Set<RecordKey>()
        var ready: [OutboxOperation] = []
        guard limit > 0 else { return [] }
        state.outbox.forEach { entry in
            // The first operation of each record decides: a quarantined one
            // holds its record's later operations back, and only those.
            if seen.insert(entry.key).inserted, !entry.quarantined, !inFlight.contains(entry.id), !excluding.contains(entry.id) {
                ready.append(entry)
            }
            return ready.count < limit
        }
        return ready
    }

    /// Records durably that `ids` may reach the server, then marks them in
    /// flight, and returns the operations to hand to the transport: those of
    /// `ids` still queued. One the user cancelled meanwhile (a create never
    /// sent, then deleted) is left out, so it is never sent.
    @discardableResult
    public func beginSending(_ ids: [OperationID]) async throws(StoreError) -> [OutboxOperation] {
        try await submit { (staged) throws(StoreError) in
            let unsent = ids.filter { staged.outbox[$0].map { !$0.sent } ?? false }
            return unsent.isEmpty ? [] : [.sent(unsent)]
        }
        // Decided against the state after this call's batch: an operation
        // removed earlier in the batch is gone, every other one is now sent.
        let accepted = ids.compactMap { id in state.outbox[id].flatMap { $0.sent ? $0 : nil } }
        inFlight.formUnion(accepted.map(\.id))
        return accepted
    }

    /// The transport reported `ids` never left the device (it was offline):
    /// they stop being in flight, and those this hand-over had newly marked
    /// sent are unsent again, so the state is as it was before the attempt.
    public func withdrawSending(_ ids: [OperationID], newlyMarked: Set<OperationID>) async throws(StoreError) {
        inFlight.subtract(ids)
        let revert = ids.filter { newlyMarked.contains($0) }
        try await submit { (staged) throws(StoreError) in
            let sent = revert.filter { staged.outbox[$0]?.sent == true }
            return sent.isEmpty ? [] : [.withdrawn(sent)]
        }
    }

    /// What the server said of one operation, as the store keeps it.
    public enum DeliveryOutcome: Sendable, Hashable {
        /// Applied; the row is the server's copy afterwards.
        case acknowledged(ServerRow)
        /// Refused: the server's copy changed (`nil`: it was deleted).
        case conflicted(server: ServerRow?)
        /// Refused; permanent failures count toward quarantine, transient ones only as attempts.
        case failed(reason: String, permanent: Bool)
        /// Refused for a reason of this kind (``FailureKind/deletedOrNoAccess`` quarantines at once).
        case failure(FailureKind, reason: String)
    }

    /// Keeps the outcomes of one push reply together: every outcome is
    /// checked first (rows of the right record, valid ids and fields), and
    /// only then are they all journaled, in one write. A reply with any
    /// malformed part is refused whole.
    ///
    /// - Returns: the number of conflicts kept.
    @discardableResult
    public func recordOutcomes(_ outcomes: [(OperationID, DeliveryOutcome)]) async throws(StoreError) -> Int {
        let policies = options.conflictPolicies
        let defaultPolicy = options.defaultConflictPolicy
        let limit = options.maximumPermanentFailures
        let now = options.clock.nowMilliseconds()
        try await submit { (staged) throws(StoreError) in
            var events: [StoreEvent] = []
            var acks: [Acknowledgement] = []
            // Outcomes of operations no longer queued (a late duplicate reply) are ignored.
            for (index, (id, outcome)) in outcomes.enumerated() {
                guard let entry = staged.outbox[id] else { continue }
                switch outcome {
                case .acknowledged(let row):
                    try Self.check(row, for: entry, index: index)
                    acks.append(Acknowledgement(operationID: id, row: row))
                case .conflicted(let server):
                    if let server { try Self.check(server, for: entry, index: index) }
                    let input = Self.conflictInput(entry, server: server, in: staged)
                    let resolution = ConflictResolution.resolve(input, policy: policies[entry.operation.entity] ?? defaultPolicy,
                                                                newID: .random(), now: now)
                    events.append(.conflictResolved(id, server: server, base: input.base, resolution: resolution))
                case .failed(let reason, let permanent):
                    events.append(Self.failure(entry, kind: permanent ? .permanent : .transient, reason: reason, limit: limit))
                case .failure(let kind, let reason):
                    events.append(Self.failure(entry, kind: kind, reason: reason, limit: limit))
                }
            }
            if !acks.isEmpty { events.insert(.acknowledged(acks), at: 0) }
            return events
        }
        return outcomes.filter { if case .conflicted = $0.1 { return true } else { return false } }.count
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

    /// Throws unless `row` is a valid server copy of `entry`'s record.
    private static func check(_ row: ServerRow, for entry: OutboxOperation, index: Int) throws(StoreError) {
        if let problem = problem(with: row) { throw .invalidServerData(kind: row.kind, index: index, reason: problem) }
        if row.key != entry.key { throw .invalidServerData(kind: row.kind, index: index, reason: "reply for another record (\(row.key))") }
    }

    /// The transport answered (or failed) for `ids`: they are no longer in flight.
    public func finishSending(_ ids: [OperationID]) {
        inFlight.subtract(ids)
    }

    /// The server applied these operations (see ``StoreEvent/acknowledged(_:)``).
    /// Unknown ids (a late duplicate reply) are ignored.
    public func acknowledge(_ acks: [Acknowledgement]) async throws(StoreError) {
        try await recordOutcomes(acks.map { ($0.operationID, .acknowledged($0.row)) })
    }

    /// An attempt to send `id` failed; a permanent failure moves it to the rejections.
    public func recordFailure(_ id: OperationID, reason: String, permanent: Bool) async throws(StoreError) {
        try await recordOutcomes([(id, .failed(reason: reason, permanent: permanent))])
    }

    /// The server refused `id` because its copy changed; its copy (`nil` if it
    /// deleted the record) replaces the snapshot and the conflict is kept for the app.
    public func recordConflict(_ id: OperationID, server: ServerRow?) async throws(StoreError) {
        try await recordOutcomes([(id, .conflicted(server: server))])
    }

    /// Keeps a page of pulled rows of `kind` and the cursor after it, together.
    /// Rows never overwrite queued local edits: the edits stay on top.
    ///
    /// - Throws: ``StoreError/invalidServerData(kind:index:reason:)`` for a row
    ///   of another kind, an empty or over-long id, a duplicate id, an empty
    ///   field name, or a cursor behind the current one; the old snapshot and
    ///   cursor are kept.
    public func applyPulledPage(kind: String, rows: [ServerRow], cursor: PullCursor?) async throws(StoreError) {
        try await applyPulledPages([PulledKindPage(kind: kind, rows: rows, cursor: cursor)])
    }

    /// One kind's share of a pulled page.
    public struct PulledKindPage: Sendable, Hashable {
        /// The kind.
        public var kind: String
        /// Its rows in the page.
        public var rows: [ServerRow]
        /// Its cursor after the page (`nil`: unchanged).
        public var cursor: PullCursor?

        /// Creates a kind's page.
        public init(kind: String, rows: [ServerRow], cursor: PullCursor?) {
            self.kind = kind
            self.rows = rows
            self.cursor = cursor
        }
    }

    /// Keeps a pulled page that spans several kinds: one record per kind, all
    /// in one journal write. Every kind is validated before anything is kept.
    public func applyPulledPages(_ pages: [PulledKindPage]) async throws(StoreError) {
        for page in pages {
            let kind = page.kind
            if kind.isEmpty { throw .emptyKind }
            var ids = Set<String>()
            for (index, row) in page.rows.enumerated() {
                if row.kind != kind { throw .invalidServerData(kind: kind, index: index, reason: "row of kind \"\(row.kind)\"") }
                if let problem = Self.problem(with: row) { throw .invalidServerData(kind: kind, index: index, reason: problem) }
                if !ids.insert(row.id).inserted { throw .invalidServerData(kind: kind, index: index, reason: "duplicate id \"\(row.id)\"") }
            }
        }
        if Set(pages.map(\.kind)).count != pages.count {
            throw .invalidServerData(kind: pages.first?.kind ?? "", index: 0, reason: "a kind appears twice in one page")
        }
        try await submit { (staged) throws(StoreError) in
            var events: [StoreEvent] = []
            for page in pages {
                if let cursor = page.cursor, let current = staged.cursors[page.kind], cursor < current {
                    throw .invalidServerData(kind: page.kind, index: page.rows.count, reason: "cursor \(cursor) is behind \(current)")
                }
                if page.rows.isEmpty && page.cursor == nil { continue }
                events += Self.pulledEvents(kind: page.kind, rows: page.rows, cursor: page.cursor)
            }
            return events
        }
    }

    /// A page as journal events: one record, or several when its rows would
    /// not fit in one, with the cursor in the last (all in one write; a crash
    /// between them keeps rows without the cursor, which the next pull fetches again).
    static func pulledEvents(kind: String, rows: [ServerRow], cursor: PullCursor?) -> [StoreEvent] {
        let whole = StoreEvent.pulled(kind: kind, rows: rows, cursor: cursor)
        let budget = JournalFormat.maximumPayloadLength / 2
        guard rows.count > 1, whole.encodedPayload().count > budget else { return [whole] }
        var events: [StoreEvent] = []
        var chunk: [ServerRow] = []
        var bytes = 0
        for row in rows {
            var writer = ByteWriter()
            row.encode(into: &writer)
            if !chunk.isEmpty && bytes + writer.bytes.count > budget {
                events.append(.pulled(kind: kind, rows: chunk, cursor: nil))
                chunk = []
                bytes = 0
            }
            chunk.append(row)
            bytes += writer.bytes.count
        }
        events.append(.pulled(kind: kind, rows: chunk, cursor: cursor))
        return events
    }

    /// The pull cursors of `kinds` (`nil` for a kind never pulled).
    public func cursors(for kinds: [String]) throws(StoreError) -> [String: PullCursor?] {
        try checkReadable()
        var result: [String: PullCursor?] = [:]
        for kind in kinds { result[kind] = .some(state.cursors[kind]) }
        return result
    }

    /// Why a server row cannot be kept, or `nil` when it can.
    public static func problem(with row: ServerRow) -> String? {
        if row.kind.isEmpty { return "empty kind" }
        if row.id.isEmpty { return "missing or empty id" }
        if row.id.utf8.count > JournalOperation.maximumRecordIDLength { return "id of \(row.id.utf8.count) bytes, at most \(JournalOperation.maximumRecordIDLength)" }
        if row.fields.keys.contains(where: \.isEmpty) { return "empty field name" }
        return nil
    }

    /// Replaces the snapshot of `kind` with a full re-pull (a resync after
    /// the server's tombstone horizon passed the cursor): `rows` are every
    /// row the server has now, rows the device holds that are not among them
    /// are forgotten, and the cursor is set (it may be behind the old one).
    /// Queued edits stay on top. One journal write; a crash part-way keeps
    /// the old cursor, so the next sync resyncs again.
    public func replaceSnapshot(kind: String, rows: [ServerRow], cursor: PullCursor?) async throws(StoreError) {
        if kind.isEmpty { throw .emptyKind }
        var ids = Set<String>()
        for (index, row) in rows.enumerated() {
            if row.kind != kind { throw .invalidServerData(kind: kind, index: index, reason: "row of kind \"\(row.kind)\"") }
            if let problem = Self.problem(with: row) { throw .invalidServerData(kind: kind, index: index, reason: problem) }
            if !ids.insert(row.id).inserted { throw .invalidServerData(kind: kind, index: index, reason: "duplicate id \"\(row.id)\"") }
        }
        try await submit { (staged) throws(StoreError) in
            let gone = staged.snapshot.keys.filter { $0.kind == kind && !ids.contains($0.id) }.map(\.id).sorted()
            var events = rows.isEmpty ? [] : Self.pulledEvents(kind: kind, rows: rows, cursor: nil)
            if !gone.isEmpty { events.append(.forgotten(kind: kind, ids: gone)) }
            // The cursor goes last, so a torn write leaves the old (expired) cursor and the resync repeats.
            events.append(.pulled(kind: kind, rows: [], cursor: cursor))
            return events
        }
    }

    // MARK: Conflicts and quarantine

    /// Sets the conflict policy of `kind` (for conflicts found from now on).
    ///
    /// ```swift
    /// await store.setConflictPolicy(.mergeFields, for: "pin")
    /// ```
    public func setConflictPolicy(_ policy: ConflictPolicy, for kind: String) {
        options.conflictPolicies[kind] = policy
    }

    /// Sends a quarantined operation again, with a fresh budget of permanent failures.
    public func retryQuarantined(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.outbox[id]?.quarantined == true else { throw .notQuarantined(id) }
            return [.released(id)]
        }
        await notifyEditObserver()
    }

    /// Drops a quarantined operation for good; the record shows the server's
    /// copy with any later queued edits on top.
    public func discardQuarantined(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.outbox[id]?.quarantined == true else { throw .notQuarantined(id) }
            return [.discarded(id)]
        }
        await notifyEditObserver()
    }

    /// Removes a conflict from ``conflicts()`` once the app has shown it; its resolution stands.
    public func dismissConflict(_ id: OperationID) async throws(StoreError) {
        try await submit { (staged) throws(StoreError) in
            guard staged.conflicts.contains(where: { $0.id == id }) else { throw .conflictNotFound(id) }
            return [.conflictDismissed(id)]
        }
    }

    /// Resolves a conflict the app's way, later (say, the user picked "keep
    /// mine"): `.keep(fields)` sets those field values (queued as an update
    /// of what the device shows now carrying the values that differ, or a
    /// create if the record is gone; fields left out keep their values),
    /// `.delete` deletes it, `.acceptServer` only dismisses. The conflict
    /// leaves ``conflicts()`` in the same journal record as the edit
    /// (`conflict-settled`), so a crash keeps both or neither.
    ///
    /// ```swift
    /// for conflict in try await store.conflicts() where userPrefersMine(conflict) {
    ///     try await store.resolveConflict(conflict.id, keeping: .keep(conflict.operation.fields))
    /// }
    /// ```
    public func resolveConflict(_ id: OperationID, keeping decision: ConflictDecision) async throws(StoreError) {
        let now = options.clock.nowMilliseconds()
        let newID = OperationID.random()
        try await submit { (staged) throws(StoreError) in
            guard let conflict = staged.conflicts.first(where: { $0.id == id }) else { throw .conflictNotFound(id) }
            let key = conflict.operation.key
            let visible = staged.visibleFields(of: key)
            var operation: JournalOperation?
            switch decision {
            case .acceptServer:
                break
            case .keep(let fields):
                try Self.validate(kind: key.kind, id: key.id, fields: fields)
                if let visible {
                    let changed = fields.filter { visible[$0.key] != $0.value }
                    if !changed.isEmpty {
                        operation = JournalOperation(id: newID, kind: .update, entity: key.kind, recordID: key.id, fields: changed,
                                                     baseUpdatedAt: staged.base(for: key), queuedAt: now)
                    }
                } else {
                    operation = JournalOperation(id: newID, kind: .create, entity: key.kind, recordID: key.id, fields: fields,
                                                 baseUpdatedAt: nil, queuedAt: now)
                }
            case .delete:
                if visible != nil {
                    operation = JournalOperation(id: newID, kind: .delete, entity: key.kind, recordID: key.id,
                                                 baseUpdatedAt: staged.base(for: key), queuedAt: now)
                }
            }
            guard let operation else { return [.conflictDismissed(id)] }
            // One record: a torn write keeps both or neither.
            var dismissed = staged
            dismissed.apply(.conflictDismissed(id))
            guard case .edit(let edit, let steps) = Self.edit(operation, in: dismissed) else { return [.conflictDismissed(id)] }
            return [.conflictSettled(id, edit: edit, compaction: steps)]
        }
        await notifyEditObserver()
    }

    // MARK: Outcomes and observation

    /// Waits until operation `id` has an outcome: acknowledged, conflicted
    /// (with the policy's resolution), quarantined, or cancelled locally. An
    /// operation merged into an earlier one by compaction reports that one's outcome.
    ///
    /// ```swift
    /// let op = try await store.update("pin", id: "p1", changes: ["visited": .bool(true)])
    /// switch await store.outcome(of: op) {
    /// case .acknowledged(let row): print("saved at", row.updatedAt)
    /// case .conflicted(let conflict): print("lost fields", conflict.resolution.lostFields)
    /// case .quarantined(let entry): print("needs attention:", entry.lastError ?? "")
    /// case .cancelled, .unknown: break
    /// }
    /// ```
    public func outcome(of id: OperationID) async -> OperationOutcome {
        var id = id
        while true {
            var settled = recentOutcomes[id]
            if settled == nil {
                guard let entry = state.outbox[id], isOpen else { return .unknown }
                if entry.quarantined { return .quarantined(entry) }
                settled = await withCheckedContinuation { outcomeWaiters[id, default: []].append($0) }
            }
            switch settled! {
            case .final(let outcome): return outcome
            case .coalesced(let into): id = into
            }
        }
    }

    /// A stream of what changes in the store: edits, acknowledgements,
    /// conflicts, quarantines and pulls. It ends when the store closes or retires.
    ///
    /// ```swift
    /// for await change in await store.changes() {
    ///     if case .conflict(let conflict) = change { showBanner(for: conflict) }
    /// }
    /// ```
    public func changes() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        guard isOpen else {
            continuation.finish()
            return stream
        }
        let token = nextObserver
        nextObserver += 1
        observers[token] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(token) }
        }
        return stream
    }

    private func removeObserver(_ token: Int) { observers[token] = nil }

    /// Sets the callback run (and awaited) after each local edit is durable:
    /// how a sync engine learns that there is work. One observer per store.
    public func setEditObserver(_ observer: (@Sendable () async -> Void)?) {
        editObserver = observer
    }

    private func notifyEditObserver() async {
        if let editObserver { await editObserver() }
    }

    private var isOpen: Bool {
        switch currentStatus {
        case .ready, .failed: return true
        case .unreadable, .retired, .closed: return false
        }
    }

    /// Tells waiters and observers what the events just applied mean.
    private func publish(_ events: [StoreEvent]) {
        var changes: [StoreChange] = []
        for event in events.flatMap(\.parts) {
            switch event {
            case .edit(let operation, let steps):
                changes.append(.edited(operation.key))
                guard !steps.isEmpty else { continue }
                var survivors: [OperationID] = steps.compactMap { if case .replace(let id, _) = $0 { return id } else { return nil } }
                survivors.append(operation.id)
                let survivor = survivors.last { state.outbox[$0] != nil }
                for case .remove(let id) in steps {
                    settle(id, survivor.map { .coalesced(into: $0) } ?? .final(.cancelled))
                }
            case .editBatch(let operations):
                for key in Set(operations.map(\.key)) { changes.append(.edited(key)) }
            case .acknowledged(let acks):
                for ack in acks {
                    settle(ack.operationID, .final(.acknowledged(ack.row)))
                    changes.append(.acknowledged(ack.operationID, ack.row))
                }
            case .conflicted(let id, _), .conflictResolved(let id, _, _, _):
                if let conflict = state.conflicts.last(where: { $0.id == id }) {
                    settle(id, .final(.conflicted(conflict)))
                    changes.append(.conflict(conflict))
                }
            case .attemptFailed(let id, _, _, let quarantine):
                if quarantine, let entry = state.outbox[id] {
                    settle(id, .final(.quarantined(entry)), remember: false)
                    changes.append(.quarantined(entry))
                }
            case .discarded(let id):
                settle(id, .final(.cancelled))
            case .pulled(let kind, let rows, _):
                if !rows.isEmpty { changes.append(.pulled(kinds: [kind])) }
            case .forgotten(let kind, _):
                changes.append(.pulled(kinds: [kind]))
            case .sent, .withdrawn, .failed, .released, .conflictDismissed, .conflictSettled, .checkpoint:
                break
            }
        }
        for change in changes {
            for observer in observers.values { observer.yield(change) }
        }
    }

    /// Resumes the waiters of `id`. An outcome that ends the operation is
    /// remembered for a while (a quarantine is not: the operation is still queued).
    private func settle(_ id: OperationID, _ outcome: SettledOutcome, remember: Bool = true) {
        if remember {
            if recentOutcomes.updateValue(outcome, forKey: id) == nil { recentOrder.append(id) }
            if recentOrder.count > 4096 {
                for old in recentOrder.prefix(1024) { recentOutcomes[old] = nil }
                recentOrder.removeFirst(1024)
            }
        }
        for waiter in outcomeWaiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: outcome) }
    }

    /// Ends every wait and observation (the store closed or retired).
    private func endObservation() {
        let waiters = outcomeWaiters
        outcomeWaiters = [:]
        for waiter in waiters.values.joined() { waiter.resume(returning: .final(.unknown)) }
        let streams = observers
        observers = [:]
        for stream in streams.values { stream.finish() }
    }

    // MARK: Checkpoints and lifecycle

    /// Rewrites the journal as a checkpoint of the current state (see
    /// ``JournalWriter/rewrite(records:)``). Queued calls are journaled first.
    public func checkpoint() async throws(StoreError) {
        try checkWritable()
        try await submit(checkpoint: true) { _ throws(StoreError) in [] }
    }

    /// Retires the store: every pending and later call returns without
    /// writing, and the journal is released so a store can be reopened on it.
    /// A late reply delivered to a retired store can never overwrite the
    /// journal a newer store uses.
    public func retire() async {
        guard currentStatus != .retired else { return }
        currentStatus = .retired
        failPending(.retired)
        inFlight.removeAll()
        endObservation()
        if let writer {
            self.writer = nil
            try? await writer.close()
        }
    }

    /// Journals everything queued and closes the journal.
    public func close() async throws(StoreError) {
        if case .retired = currentStatus { return }
        if case .closed = currentStatus { return }
        if case .ready = currentStatus, !pending.isEmpty || flushing {
            try await submit { _ throws(StoreError) in [] }
        }
        currentStatus = .closed
        failPending(.closed)
        endObservation()
        if let writer {
            self.writer = nil
            do { try await writer.close() } catch { throw .journal(error) }
        }
    }

    // MARK: The write pipeline

    /// A change waiting to be journaled: it computes its events against the
    /// state staged so far, when its batch is formed.
    private struct Request {
        var compute: (StoreState) throws(StoreError) -> [StoreEvent]
        var checkpoint: Bool
        var continuation: CheckedContinuation<Result<Void, StoreError>, Never>
    }

    /// Journals the events `compute` returns, applies them, and returns once
    /// they are durable and visible.
    private func submit(checkpoint: Bool = false,
                        _ compute: @escaping (StoreState) throws(StoreError) -> [StoreEvent]) async throws(StoreError) {
        try checkWritable()
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            pending.append(Request(compute: compute, checkpoint: checkpoint, continuation: continuation))
            if !flushing {
                flushing = true
                Task { await self.flush() }
            }
        }
        try result.get()
    }

    private func failPending(_ error: StoreError) {
        let waiting = pending
        pending = []
        for request in waiting { request.continuation.resume(returning: .failure(error)) }
    }

    /// Forms batches from the queued requests, one journal write at a time.
    private func flush() async {
        defer { flushing = false }
        while !pending.isEmpty {
            guard case .ready = currentStatus, let writer else {
                failPending(currentStatus == .retired ? .retired : .closed)
                return
            }
            // A checkpoint request ends a batch, so it sees everything before it.
            var batch: [Request] = []
            while !pending.isEmpty {
                let next = pending.removeFirst()
                if next.checkpoint && !batch.isEmpty {
                    pending.insert(next, at: 0)
                    break
                }
                batch.append(next)
                if next.checkpoint { break }
            }
            if batch.count == 1 && batch[0].checkpoint {
                await runCheckpoint(batch[0], writer: writer)
                continue
            }
            var events: [StoreEvent] = []
            var results: [Result<Void, StoreError>] = []
            var records: [(type: RecordType, payload: [UInt8])] = []
            for request in batch {
                do throws(StoreError) {
                    let decided = try request.compute(staged)
                    let encoded = decided.map { (type: $0.recordType, payload: $0.encodedPayload()) }
                    // Checked per request, so one oversized change fails alone
                    // instead of failing everything written with it.
                    if let large = encoded.first(where: { $0.payload.count > JournalFormat.maximumPayloadLength }) {
                        throw .tooLarge(bytes: large.payload.count, maximum: JournalFormat.maximumPayloadLength)
                    }
                    for event in decided { staged.apply(event) }
                    events += decided
                    records += encoded
                    results.append(.success(()))
                } catch {
                    results.append(.failure(error))
                }
            }
            if !records.isEmpty {
                do {
                    try await writer.append(records: records)
                } catch {
                    // Nothing was appended: the view and the outbox stay as they were.
                    staged = state
                    if case .writerFailed = error {
                        currentStatus = .failed(reason: error.description)
                        writerFailure = error
                    }
                    for (request, result) in zip(batch, results) {
                        if case .success = result { request.continuation.resume(returning: .failure(.journal(error))) } else {
                            request.continuation.resume(returning: result)
                        }
                    }
                    continue
                }
                // Retired while the write was in flight: the records are in the
                // journal (a reopened store replays them) but this store changes nothing more.
                guard case .ready = currentStatus else {
                    for request in batch { request.continuation.resume(returning: .failure(.retired)) }
                    failPending(.retired)
                    return
                }
                for event in events { state.apply(event) }
                journalRecords += records.count
                publish(events)
            }
            for (request, result) in zip(batch, results) { request.continuation.resume(returning: result) }
            if options.checkpointThreshold > 0 && journalRecords - state.liveItemCount > options.checkpointThreshold {
                await runCheckpoint(nil, writer: writer)
            }
        }
    }

    private func runCheckpoint(_ request: Request?, writer: JournalWriter) async {
        let parts = state.checkpointParts()
        let records = parts.map { part -> (type: RecordType, payload: [UInt8]) in
            let event = StoreEvent.checkpoint(part)
            return (event.recordType, event.encodedPayload())
        }
        do {
            try await writer.rewrite(records: records)
            journalRecords = records.count
            request?.continuation.resume(returning: .success(()))
        } catch {
            if case .writerFailed = error {
                currentStatus = .failed(reason: error.description)
                writerFailure = error
            }
            request?.continuation.resume(returning: .failure(.journal(error)))
        }
    }
}
