import SyncJournalPlatform
import SyncJournalProtocol
import SyncJournalCore

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
/// let id = try await store.create("pin", fields: ["name": .string("Tapas bar")]).id
/// try await store.update("pin", id: id, changes: ["visited": .bool(true)])
/// let pin = try await store.record("pin", id: id)      // shows both edits
/// try await store.delete("pin", id: id)                // never sent: both vanish
/// ```
///
/// Concurrent calls are journaled in arrival order; calls that arrive while
/// an append is being synced share the next write and `fdatasync`.
///
/// The store runs on a thread of its own (it blocks there on the journal's
/// writes), which ends when the store is released.
///
/// It holds the journal's file lock while it is open. ``Options/readOnly``
/// opens a journal without it, to read one another process writes;
/// ``suspend()`` releases it while an iOS app is suspended.
public actor LocalStore {
    /// The store's own thread, where it decides and writes the journal's batches.
    nonisolated let executor = DedicatedThreadExecutor()
    /// Runs the store on its own thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The journal's path.
    public nonisolated let path: String
    /// What opening found: a repaired torn tail, the records replayed.
    package nonisolated let recovery: JournalRecovery?
    var options: Options
    /// The clock edits are stamped with and the maker of new records' ids
    /// (from ``Options``, which never change them), read off the actor.
    nonisolated let editClock: any SyncClock
    nonisolated let makeRecordID: @Sendable () -> String
    var writer: JournalWriter?
    /// The durable state the app sees, and the staged one the next change
    /// is decided against (``VisibleAndStaged`` keeps the rule between them).
    var states: VisibleAndStaged
    /// The durable state: what the app sees.
    var state: StoreState { states.visible }
    /// Operations handed to a transport and awaiting a reply. Memory only:
    /// after a restart nothing is in flight.
    var inFlight: Set<OperationID> = []
    var currentStatus: StoreStatus
    /// The journal error that failed the store, given to every later write.
    var writerFailure: JournalError?
    /// Records in the journal file, to decide when a checkpoint pays off.
    var journalRecords: Int
    /// The automatic checkpoint being written beside the journal, if any.
    var checkpointInProgress: CheckpointInProgress?
    /// Bytes a checkpoint took per live item, measured at the last one
    /// (`nil` before this store made one): how live bytes are estimated.
    var checkpointBytesPerLiveItem: Double?
    /// Callers waiting for the automatic checkpoint to end.
    var upkeepWaiters: [CheckedContinuation<Void, Never>] = []
    /// Automatic checkpoints that replaced the journal since the store opened.
    package var automaticCheckpoints = 0
    /// Changes waiting for a batch, in the batcher (for tests that order
    /// calls behind a held journal write).
    package var changesWaitingForBatch: Int { batcher.pendingCount }
    /// After an automatic checkpoint failed (a full disk, say): the journal
    /// size from which the next one is tried, so a failing disk is not
    /// rewritten after every sync.
    var upkeepRetryBytes: Int64 = 0
    /// Changes waiting for their journal write, and batches waiting for their sync.
    var batcher = WriteBatcher()
    /// Edits handed in from outside the actor, waiting to join the batcher
    /// (`LocalStore+WritePipeline.swift`).
    nonisolated let inbox = Mutex(WriteInbox())
    /// Callers waiting for the running barrier to end.
    var syncIdleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Waiters for outcomes and streams of changes.
    var board = OutcomeBoard()
    /// Called after each durable local edit (the sync engine's trigger).
    var editObserver: (@Sendable () -> Void)?
    /// The indexes of ``Options/indexes`` over the visible state.
    var fieldIndexes: FieldIndexes
    /// The queries followed through ``observe(_:)``.
    var observedQueries = ObservedQueries()
    /// How often a query read every record of its kind (no index answered
    /// it), and how many records queries examined: for tests of the indexes.
    package var queryWork = QueryWork()
    /// The damaged tail a read-only opening left unread (``unreadTail``).
    var unreadTailFound: UnreadTail?
    /// A suspension under way, and the hand-overs one abandoned (`LocalStore+Suspension.swift`).
    var suspension = SuspensionState()
    /// The attachments' files beside the journal, made on first use.
    var attachmentStoreIfMade: AttachmentStore?

    init(path: String, options: Options, writer: JournalWriter?, state: StoreState, status: StoreStatus,
                 journalRecords: Int, recovery: JournalRecovery?) {
        self.path = path
        self.options = options
        editClock = options.clock
        makeRecordID = options.makeRecordID
        self.writer = writer
        states = VisibleAndStaged(state)
        fieldIndexes = options.indexes.isEmpty ? FieldIndexes() : FieldIndexes(options.indexes, state: state)
        currentStatus = status
        self.journalRecords = journalRecords
        self.recovery = recovery
    }

    deinit {
        executor.shutdown()
    }

    /// Ready, unreadable, failed, suspended, retired or closed.
    public var status: StoreStatus { currentStatus }

    func checkReadable() throws(StoreError) {
        switch currentStatus {
        case .ready, .failed, .suspended: return
        case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
        case .retired: throw .retired
        case .closed: throw .closed
        }
    }

    func checkWritable() throws(StoreError) {
        switch currentStatus {
        case .ready:
            if options.readOnly { throw .readOnly(path: path) }
            if suspension.suspending { throw .suspended(path: path) }
        case .suspended: throw options.readOnly ? .readOnly(path: path) : .suspended(path: path)
        case .failed: throw .journal(writerFailure ?? .closed(path: path))
        case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
        case .retired: throw .retired
        case .closed: throw .closed
        }
    }

    /// Whether waiters and observers can still hear of changes.
    var isOpen: Bool {
        switch currentStatus {
        case .ready, .failed, .suspended: return true
        case .unreadable, .retired, .closed: return false
        }
    }
}
