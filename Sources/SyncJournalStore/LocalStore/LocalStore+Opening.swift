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
    /// - Throws: ``StoreError/cannotOpen(path:cause:)`` when the journal is
    ///   locked by another store or cannot be opened at all.
    public static func open(path: String, options: Options = Options()) async throws(StoreError) -> LocalStore {
        // Replay folds the records the writer's recovery scan reads: one pass over the file.
        let replay = ReplayDuringOpen()
        let writer: JournalWriter
        var writerOptions = JournalWriter.Options(mode: .groupCommit, system: options.system, visitRecord: { replay.fold($0) },
                                                  preallocationBytes: options.preallocationBytes, understands: StoreEvent.isUnderstood)
        // A 1.x journal moves to format 2 only once replay accepts it: a
        // journal the store refuses is left as it was.
        writerOptions.defersFormatMove = true
        do {
            writer = try await JournalWriter.open(path: path, options: writerOptions)
        } catch {
            switch error {
            case .corrupt, .notAJournal, .unsupportedVersion, .unsupported:
                return LocalStore(path: path, options: options, writer: nil, state: StoreState(),
                                  status: .unreadable(UnreadableReason(error)), journalRecords: 0, recovery: nil)
            default:
                throw .cannotOpen(path: path, cause: error)
            }
        }
        let replayed: (state: StoreState, records: Int)
        do {
            replayed = try await replay.finish(header: writer.header)
        } catch {
            try? await writer.close()
            return LocalStore(path: path, options: options, writer: nil, state: StoreState(),
                              status: .unreadable(UnreadableReason(error)), journalRecords: 0, recovery: nil)
        }
        do { try await writer.moveToCurrentFormat() } catch {
            try? await writer.close()
            throw .cannotOpen(path: path, cause: error)
        }
        return LocalStore(path: path, options: options, writer: writer, state: replayed.state, status: .ready,
                          journalRecords: replayed.records, recovery: writer.recovery)
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
        try await Self.salvage(path: path, to: destination, includeRecordsAfterDamage: includeRecordsAfterDamage, fileSystem: options.fileSystem)
    }
}
