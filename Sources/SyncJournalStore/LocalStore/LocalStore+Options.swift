import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// How a store is opened.
    public struct Options: Sendable {
        /// The file system the journal lives on: the machine's own, or a
        /// simulated disk in tests.
        public var fileSystem: FileSystem
        /// The system calls of ``fileSystem``.
        package var system: any SystemCalls {
            get { fileSystem.calls }
            set { fileSystem = FileSystem(newValue) }
        }
        /// The clock whose wall time the store stamps on edits (`queuedAt`); give
        /// the engine the same one.
        public var clock: any SyncClock
        /// When the store checkpoints its journal by itself, off the edit
        /// path (``UpkeepPolicy``): past 1.5× the live bytes or items, never
        /// under 1 MiB and 1,000 records, by default. `.off` leaves it to
        /// ``LocalStore/checkpoint()``.
        public var upkeep: UpkeepPolicy
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
        /// (`JournalWriter.Options.preallocationBytes`; 0: never, which tests use to
        /// see the file's exact bytes; a journal created so does without the
        /// closed-end rule of format 2.2).
        public var preallocationBytes: Int
        /// The fields to index, so that queries comparing them read only the
        /// records they return (``FieldIndex``). Built when the store opens
        /// and kept up to date with every change; none by default.
        public var indexes: [FieldIndex] = []
        /// Open the journal for reading only (off by default): the store
        /// reads, queries and observes it, and never writes. It takes no
        /// writer's lock, so it opens a journal another process (the app, or
        /// an extension) has open for writing, or a copy in a directory it
        /// cannot write. It creates nothing: a missing journal is an error.
        /// A torn tail is read up to the damage and left in place
        /// (``LocalStore/unreadTail``). Edits, checkpoints and sync work fail
        /// with ``StoreError/readOnly(path:)``; ``LocalStore/resume()`` after
        /// ``LocalStore/suspend()`` reads the journal again.
        ///
        /// ```swift
        /// var options = LocalStore.Options()
        /// options.readOnly = true
        /// let widget = try await LocalStore.open(path: "group/pins.journal", options: options)
        /// let pins = try await widget.records("pin")
        /// ```
        public var readOnly = false
        /// The data protection class of every file the store creates (the
        /// journal, its lock file, checkpoints, side files), on iOS, tvOS,
        /// watchOS and visionOS; `nil` (the default) leaves them the
        /// container's default class. No effect on other platforms.
        ///
        /// ```swift
        /// var options = LocalStore.Options()
        /// options.fileProtection = .completeUntilFirstUserAuthentication
        /// ```
        public var fileProtection: FileProtection?
        /// The most bytes of downloaded attachments (and of added ones the
        /// server has confirmed) kept beside the journal; past it the least
        /// recently used are removed, to be downloaded again when needed.
        /// Attachments not yet on the server, and those a queued edit refers
        /// to, never count and are never removed.
        /// 256 MiB by default.
        public var attachmentCacheBytes: Int64 = 256 << 20
        /// How long an attachment's file is kept once no record, queued
        /// edit, conflict or rejection refers to it (an undo may bring the
        /// reference back): 24 hours by default.
        public var attachmentGrace: Duration = .seconds(24 * 3600)

        /// ``system``, giving the files it creates ``fileProtection``.
        var creatingSystem: any SystemCalls {
            guard let fileProtection else { return system }
            return FileProtectingSystemCalls(system, protection: fileProtection)
        }

        /// Default options: the machine's file system and clock, the standard
        /// upkeep (checkpoint past 1.5× the live bytes), server wins, quarantine after 3 permanent
        /// failures, the journal preallocated 1 MiB at a time.
        public init(fileSystem: FileSystem = .system, clock: any SyncClock = ContinuousClock(),
                    upkeep: UpkeepPolicy = .standard,
                    makeRecordID: @escaping @Sendable () -> String = { OperationID.random().description },
                    conflictPolicies: [String: ConflictPolicy] = [:], defaultConflictPolicy: ConflictPolicy = .serverWins,
                    maximumPermanentFailures: Int = 3, preallocationBytes: Int = 1 << 20) {
            self.fileSystem = fileSystem
            self.clock = clock
            self.upkeep = upkeep
            self.makeRecordID = makeRecordID
            self.conflictPolicies = conflictPolicies
            self.defaultConflictPolicy = defaultConflictPolicy
            self.maximumPermanentFailures = max(1, maximumPermanentFailures)
            self.preallocationBytes = max(0, preallocationBytes)
        }

        /// Options over these system calls (a fault injector in the package's own tests).
        package init(system: any SystemCalls, clock: any SyncClock = ContinuousClock(),
                     upkeep: UpkeepPolicy = .standard,
                     makeRecordID: @escaping @Sendable () -> String = { OperationID.random().description },
                     conflictPolicies: [String: ConflictPolicy] = [:], defaultConflictPolicy: ConflictPolicy = .serverWins,
                     maximumPermanentFailures: Int = 3, preallocationBytes: Int = 1 << 20) {
            self.init(fileSystem: FileSystem(system), clock: clock, upkeep: upkeep,
                      makeRecordID: makeRecordID, conflictPolicies: conflictPolicies,
                      defaultConflictPolicy: defaultConflictPolicy,
                      maximumPermanentFailures: maximumPermanentFailures, preallocationBytes: preallocationBytes)
        }
    }
}
