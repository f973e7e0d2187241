import Foundation
import SyncJournal
import SyncJournalHTTP

/// The app's model layer: the only place that talks to the store. A ``Note``
/// is a typed record (`SyncRecord`) of kind `note` with two fields, `text`
/// (a string) and `created` (milliseconds since 1970, an integer), in one
/// journal per device directory.
///
/// Conflicts use the `mergeFields` policy: an edit of the text merges with
/// another device's change of other fields; when both devices changed the
/// text, the text that reached the server first stays and the other is
/// surfaced as a ``NoteConflict`` until the user edits or deletes the note.
public struct NotesRepository: Sendable {
    /// The record kind of a note.
    public static var kind: String { Note.kind }
    /// The journal's file name inside the device directory.
    public static let journalName = "notes.journal"

    /// The store holding this device's notes.
    public let store: LocalStore
    /// The device directory.
    public let directory: String

    /// Opens the notes of the device directory `directory`, creating it if missing.
    ///
    /// - Throws: ``NotesError/journalLocked(directory:)`` when another process
    ///   holds the journal; ``NotesError/journalUnreadable(directory:reason:)``
    ///   when it cannot be read; ``NotesError/directoryUnusable(directory:reason:)``.
    public static func open(directory: String) async throws(NotesError) -> NotesRepository {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .directoryUnusable(directory: directory, reason: (error as NSError).localizedDescription)
        }
        var options = LocalStore.Options()
        options.conflictPolicies[kind] = .mergeFields
        let store: LocalStore
        do {
            store = try await LocalStore.open(path: directory + "/" + journalName, options: options)
        } catch {
            switch error {
            case .cannotOpen(_, cause: .locked), .journal(.locked): throw .journalLocked(directory: directory)
            default: break
            }
            throw .directoryUnusable(directory: directory, reason: error.description)
        }
        if case .unreadable(let reason) = await store.status {
            try? await store.close()
            throw .journalUnreadable(directory: directory, reason: "\(reason)")
        }
        return NotesRepository(store: store, directory: directory)
    }

    /// Adds a note created now and returns its id.
    public func add(text: String) async throws(NotesError) -> String {
        let created = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let note = Note(id: UUID().uuidString.lowercased(), text: text, created: created)
        do {
            return try await store.insert(note).id
        } catch {
            throw Self.translate(error, id: note.id)
        }
    }

    /// Replaces the text of note `id`. A conflict waiting on the note is
    /// settled by this edit: the new text is what the user wants.
    public func edit(id: String, text: String) async throws(NotesError) {
        let waiting = try await conflictIDs(ofVisibleNote: id)
        if let first = waiting.first {
            do throws(StoreError) {
                // The edit and the conflict's removal are one journal record.
                try await store.resolveConflict(first, keeping: .keep(["text": .string(text)]))
                for other in waiting.dropFirst() { try await store.dismissConflict(other) }
            } catch {
                throw Self.translate(error, id: id)
            }
            return
        }
        do {
            try await store.update(Note.self, id: id) { $0.text = text }
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// Deletes note `id`, settling any conflict waiting on it. For a note
    /// another device deleted, whose conflict is still listed, it dismisses
    /// that conflict: the user has seen it.
    public func remove(id: String) async throws(NotesError) {
        do throws(StoreError) {
            let waiting = try await conflictIDs(of: id)
            guard try await store.record(Self.kind, id: id) != nil else {
                if waiting.isEmpty { throw .recordNotFound(RecordKey(kind: Self.kind, id: id)) }
                for conflict in waiting { try await store.dismissConflict(conflict) }
                return
            }
            if let first = waiting.first {
                try await store.resolveConflict(first, keeping: .delete)
                for other in waiting.dropFirst() { try await store.dismissConflict(other) }
                return
            }
        } catch {
            throw Self.translate(error, id: id)
        }
        do {
            try await store.delete(Note.self, id: id)
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// The list's query: every note, oldest first. Notes created in the same
    /// millisecond (on two devices) tie in this order and come by id.
    public static let listQuery = Query(Note.self).order(Field("created").ascending)

    /// The notes in creation order (then by id), the conflicts waiting, and
    /// the notes that do not decode.
    public func snapshot() async throws(NotesError) -> NotesSnapshot {
        let notes: TypedRecords<Note>
        do {
            notes = try await store.fetch(Note.self, matching: Self.listQuery)
        } catch {
            throw Self.translate(error, id: "")
        }
        return try await snapshot(of: notes)
    }

    /// Follows the list: the records of ``listQuery`` now, then again after
    /// every change that alters them (a local edit, a pull, an
    /// acknowledgement, a conflict). Decode each with `TypedRecords(decoding:)`
    /// and read it with ``snapshot(of:)``. It ends
    /// when the store closes or the reading task is cancelled.
    public func observeList() -> QueryObservation {
        store.observe(Self.listQuery)
    }

    /// The snapshot of the list whose notes are `notes` (results of ``listQuery``, in its order).
    public func snapshot(of notes: TypedRecords<Note>) async throws(NotesError) -> NotesSnapshot {
        do {
            let conflicts = try await store.conflicts().filter(Self.isShown).map(Self.conflict)
            return NotesSnapshot(notes: notes.values, conflicts: conflicts, unreadable: notes.undecodable.map(\.description))
        } catch {
            throw .store(error)
        }
    }

    /// An engine that syncs notes with the server at `server` using `token`
    /// (see ``engine(transport:idlePullInterval:changeWaitTimeout:clock:)``).
    public func engine(server: URL, token: String, idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil,
                       clock: any SyncClock = ContinuousSyncClock()) -> SyncEngine {
        engine(transport: HTTPTransport(baseURL: server, token: token), idlePullInterval: idlePullInterval,
               changeWaitTimeout: changeWaitTimeout, clock: clock)
    }

    /// An engine that syncs notes through `transport`, timing its retries
    /// with `clock`. Once started, it pulls every `idlePullInterval` while
    /// idle, and keeps a wait for server changes open for up to
    /// `changeWaitTimeout` at a time (`nil`: neither).
    public func engine(transport: any SyncTransport, idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil,
                       clock: any SyncClock = ContinuousSyncClock()) -> SyncEngine {
        SyncEngine(store: store, transport: transport,
                   options: .init(kinds: [Self.kind], idlePullInterval: idlePullInterval, changeWaitTimeout: changeWaitTimeout),
                   clock: clock)
    }

    /// Closes the store (queued edits stay in the journal for the next run).
    public func close() async {
        try? await store.close()
    }

    /// The conflicts waiting on note `id`, which must be visible.
    private func conflictIDs(ofVisibleNote id: String) async throws(NotesError) -> [OperationID] {
        do throws(StoreError) {
            guard try await store.record(Self.kind, id: id) != nil else { throw .recordNotFound(RecordKey(kind: Self.kind, id: id)) }
            return try await conflictIDs(of: id)
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// The conflicts waiting on note `id` that the list shows.
    private func conflictIDs(of id: String) async throws(StoreError) -> [OperationID] {
        try await store.conflicts().filter { Self.isShown($0) && $0.operation.recordID == id }.map(\.id)
    }

    /// Whether the list shows a conflict: one of a note where this device's
    /// delete, or some of its edit, was not kept (a conflict the merge
    /// resolved without losing anything is not).
    private static func isShown(_ conflict: ConflictRecord) -> Bool {
        conflict.operation.entity == kind && (conflict.operation.kind == .delete || !conflict.resolution.lostFields.isEmpty)
    }

    private static func translate(_ error: StoreError, id: String) -> NotesError {
        if case .recordNotFound = error { return .noteNotFound(id: id) }
        return .store(error)
    }

    private static func translate(_ error: SyncRecordError, id: String) -> NotesError {
        switch error {
        case .notFound: return .noteNotFound(id: id)
        case .store(let error): return translate(error, id: id)
        case .undecodable(let report): return .noteUnreadable(report.description)
        case .encodingFailed, .idChanged, .kindMismatch: return .noteUnreadable(error.description)
        }
    }

    private static func conflict(_ record: ConflictRecord) -> NoteConflict {
        var lost: String?
        if record.operation.kind != .delete, case .string(let text)? = record.operation.fields["text"] { lost = text }
        return NoteConflict(noteID: record.operation.recordID, lostText: lost, shape: record.shape.description)
    }
}
