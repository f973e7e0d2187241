import SyncJournalProtocol
import SyncJournalCore

extension LocalStore {
    /// Opens the store on the journal at `path`, creating it if needed, and
    /// rebuilds the state by replaying the journal.
    ///
    /// A journal that is corrupt, not a journal, or of a newer format opens
    /// the store in ``StoreStatus/unreadable(_:)``: nothing is written
    /// to it. A torn tail (a crash mid-append) is repaired.
    ///
    /// With ``Options/readOnly`` the journal is only read: nothing is
    /// created, cut or locked.
    ///
    /// - Throws: ``StoreError/cannotOpen(path:cause:)`` when the journal is
    ///   locked by another store or cannot be opened at all (or, read-only,
    ///   does not exist).
    public static func open(path: String, options: Options = Options()) async throws(StoreError) -> LocalStore {
        if options.readOnly { return try await openReadOnly(path: path, options: options) }
        switch await openJournal(path: path, options: options) {
        case .opened(let writer, let state, let records):
            return LocalStore(path: path, options: options, writer: writer, state: state, status: .ready,
                              journalRecords: records, recovery: writer.recovery)
        case .unreadable(let reason):
            return LocalStore(path: path, options: options, writer: nil, state: StoreState(),
                              status: .unreadable(reason), journalRecords: 0, recovery: nil)
        case .cannotOpen(let error):
            throw .cannotOpen(path: path, cause: error)
        }
    }

    /// How opening the journal for writing ended.
    enum JournalOpening: Sendable {
        /// Locked, repaired and replayed.
        case opened(JournalWriter, StoreState, records: Int)
        /// Corrupt, not a journal, or newer than this version: left as it was.
        case unreadable(UnreadableReason)
        /// Locked by another writer, or the file could not be opened.
        case cannotOpen(JournalError)
    }

    /// Opens the writer on the journal at `path` (taking its lock) and
    /// replays it: what ``open(path:options:)`` and ``resume()`` share.
    /// `creating: false` refuses a missing journal instead of creating one.
    static func openJournal(path: String, options: Options, creating: Bool = true) async -> JournalOpening {
        // Replay folds the records the writer's recovery scan reads: one pass over the file.
        let replay = ReplayDuringOpen()
        let writer: JournalWriter
        var writerOptions = JournalWriter.Options(mode: .groupCommit, system: options.creatingSystem, visitRecord: { replay.fold($0) },
                                                  preallocationBytes: options.preallocationBytes, understands: StoreEvent.isUnderstood)
        // A 1.x journal moves to format 2 only once replay accepts it: a
        // journal the store refuses is left as it was.
        writerOptions.defersFormatMove = true
        writerOptions.createIfMissing = creating
        do {
            writer = try await JournalWriter.open(path: path, options: writerOptions)
        } catch {
            switch error {
            case .corrupt, .notAJournal, .unsupportedVersion, .unsupported:
                return .unreadable(UnreadableReason(error))
            default:
                return .cannotOpen(error)
            }
        }
        let replayed: (state: StoreState, records: Int)
        do {
            replayed = try await replay.finish(header: writer.header)
        } catch {
            try? await writer.close()
            return .unreadable(UnreadableReason(error))
        }
        do { try await writer.moveToCurrentFormat() } catch {
            try? await writer.close()
            return .cannotOpen(error)
        }
        return .opened(writer, replayed.state, records: replayed.records)
    }

    /// Copies what is readable of the journal at `path` into a new journal at
    /// `destination` and leaves the original untouched (see ``SalvageReport``).
    public static func salvage(path: String, to destination: String, includeRecordsAfterDamage: Bool = false,
                               fileSystem: FileSystem = .system) async throws -> SalvageReport {
        try await JournalSalvage.salvage(from: path, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage,
                                         system: fileSystem.calls)
    }

    /// Salvages this store's journal into `destination` (the store stays as it is).
    public func salvage(to destination: String, includeRecordsAfterDamage: Bool = false) async throws -> SalvageReport {
        try await Self.salvage(path: path, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage,
                               fileSystem: FileSystem(options.creatingSystem))
    }
}
