import SyncJournalProtocol
import SyncJournalCore

// A read-only store reads the journal once, with the reader (never the
// writer): no lock is taken, nothing is cut, created or rewritten, so it can
// look at a journal another process has open for writing, or at a copy in a
// directory it cannot write.
extension LocalStore {
    /// Whether the store was opened with ``Options/readOnly``.
    public var isReadOnly: Bool { options.readOnly }

    /// The damaged tail a read-only store found at the end of its journal and
    /// read up to, leaving it in place; `nil` when the journal ended cleanly
    /// (and always for a store open for writing, which cuts such a tail off).
    public var unreadTail: UnreadTail? { unreadTailFound }

    /// Opens a read-only store on the journal at `path`.
    static func openReadOnly(path: String, options: Options) async throws(StoreError) -> LocalStore {
        switch await readJournal(path: path, system: options.system) {
        case .read(let result):
            let store = LocalStore(path: path, options: options, writer: nil, state: result.state, status: .ready,
                                   journalRecords: result.records, recovery: nil)
            await store.noteUnreadTail(UnreadTail(result.report))
            return store
        case .unreadable(let reason):
            return LocalStore(path: path, options: options, writer: nil, state: StoreState(), status: .unreadable(reason),
                              journalRecords: 0, recovery: nil)
        case .cannotOpen(let error):
            throw .cannotOpen(path: path, cause: error)
        }
    }

    func noteUnreadTail(_ tail: UnreadTail?) { unreadTailFound = tail }

    /// How reading a journal without writing it ended.
    enum JournalRead: Sendable {
        /// The state of the records up to the end or the damaged tail.
        case read(Replayer.Result)
        /// The journal is corrupt, not a journal, or newer than this version.
        case unreadable(UnreadableReason)
        /// The file could not be read at all (missing, no permission, an I/O error).
        case cannotOpen(JournalError)
    }

    /// Reads and replays the journal at `path`, off the concurrency pool.
    static func readJournal(path: String, system: any SystemCalls) async -> JournalRead {
        await BlockingIO.run { () throws(Never) -> JournalRead in
            do {
                return .read(try Replayer.replay(path: path, system: system))
            } catch let error as JournalError {
                if case .io = error { return .cannotOpen(error) }
                return .unreadable(UnreadableReason(error))
            } catch let failure as Replayer.Failure {
                return .unreadable(UnreadableReason(failure))
            } catch {
                return .unreadable(.corrupt(offset: nil, detail: "\(error)"))
            }
        }
    }
}
