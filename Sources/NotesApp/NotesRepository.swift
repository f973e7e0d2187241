import Foundation
import SyncJournal
import SyncJournalHTTP

/// The app's model layer: the only place that talks to the store. Notes are
/// typed records (`SyncRecord`) of kind `note` in one journal per device
/// directory, read and written through the model type of the version the app
/// runs as: ``Note`` in version 2 (`body`, stored as `text`; `created`;
/// `pinned`), ``NoteVersion1`` in version 1 (`text`, `created`).
///
/// Conflicts use the `mergeFields` policy: an edit of the text merges with
/// another device's change of other fields (a pin), so a version-1 device's
/// edit never unpins a note; when both devices changed the text, the text
/// that reached the server first stays and the other is surfaced as a
/// ``NoteConflict`` until the user edits or deletes the note.
public struct NotesRepository: Sendable {
    /// The record kind of a note.
    public static var kind: String { Note.kind }
    /// The journal's file name inside the device directory.
    public static let journalName = "notes.journal"
    /// The stored name of the note's text in every version: version 2 renamed
    /// the property `body`, and a rename never changes what is stored, so
    /// conflicts, which hold stored fields, name it `text`.
    public static let textField = "text"
    /// The stored name of version 2's pin.
    public static let pinnedField = "pinned"

    /// The store holding this device's notes.
    public let store: LocalStore
    /// The device directory.
    public let directory: String
    /// The version of the app this repository runs as.
    public let modelVersion: NotesModelVersion

    /// Opens the notes of the device directory `directory`, creating it if
    /// missing, to be read and written as `modelVersion` of the app does.
    ///
    /// - Throws: ``NotesError/journalLocked(directory:)`` when another process
    ///   holds the journal; ``NotesError/journalUnreadable(directory:reason:)``
    ///   when it cannot be read; ``NotesError/directoryUnusable(directory:reason:)``.
    public static func open(directory: String, modelVersion: NotesModelVersion = .current) async throws(NotesError) -> NotesRepository {
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
        return NotesRepository(store: store, directory: directory, modelVersion: modelVersion)
    }

    /// Adds a note created now to `space` (the user's own notes unless a
    /// shared space is named) and returns its id.
    ///
    /// - Throws: ``NotesError/store(_:)`` with ``StoreError/readOnlySpace(_:)``
    ///   when the user is a viewer of `space`, or ``NotesError/noSuchSpace(_:)``
    ///   when this device does not know it.
    public func add(text: String, in space: SpaceID = .personal) async throws(NotesError) -> String {
        let created = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let id = UUID().uuidString.lowercased()
        do {
            switch modelVersion {
            case .version1: return try await store.insert(NoteVersion1(id: id, text: text, created: created), in: space).id
            case .version2: return try await store.insert(Note(id: id, body: text, created: created, pinned: false), in: space).id
            }
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// Replaces the text of note `id`. A conflict waiting on the note is
    /// settled by this edit: the new text is what the user wants.
    public func edit(id: String, text: String) async throws(NotesError) {
        let space = try await space(ofVisibleNote: id)
        let waiting = try await shownConflictIDs(of: id, in: space)
        if let first = waiting.first {
            do throws(StoreError) {
                // The edit and the conflict's removal are one journal record.
                try await store.resolveConflict(first, keeping: .keep([Self.textField: .string(text)]))
                for other in waiting.dropFirst() { try await store.dismissConflict(other) }
            } catch {
                throw Self.translate(error, id: id)
            }
            return
        }
        do {
            // Each version changes only the text, so a pin stays as it is.
            switch modelVersion {
            case .version1: try await store.update(NoteVersion1.self, id: id, in: space) { $0.text = text }
            case .version2: try await store.update(Note.self, id: id, in: space) { $0.body = text }
            }
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// Pins note `id` to the top of the list (`pinned` true) or unpins it.
    /// A conflict waiting on the note that lost only a pin or unpin is
    /// dismissed: the user has said again what they want.
    ///
    /// - Throws: ``NotesError/needsModelVersion(command:version:)`` in version 1,
    ///   which has no pins; ``NotesError/noteNotFound(id:)``.
    public func setPinned(id: String, _ pinned: Bool) async throws(NotesError) {
        guard modelVersion.hasPins else { throw .needsModelVersion(command: pinned ? "pin" : "unpin", version: .version2) }
        let space = try await space(ofVisibleNote: id)
        let waiting = try await shownConflictIDs(of: id, in: space, lostOnly: [Self.pinnedField])
        do {
            try await store.update(Note.self, id: id, in: space) { $0.pinned = pinned }
        } catch {
            throw Self.translate(error, id: id)
        }
        do throws(StoreError) {
            for conflict in waiting { try await store.dismissConflict(conflict) }
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// Deletes note `id`, settling any conflict waiting on it. For a note
    /// another device deleted, whose conflict is still listed, it dismisses
    /// that conflict: the user has seen it.
    public func remove(id: String) async throws(NotesError) {
        let space: SpaceID
        do throws(StoreError) {
            guard let found = try await spaceOfNote(id) else {
                let waiting = try await conflictIDs(of: id, in: nil)
                if waiting.isEmpty { throw .recordNotFound(RecordKey(kind: Self.kind, id: id)) }
                for conflict in waiting { try await store.dismissConflict(conflict) }
                return
            }
            space = found
            let waiting = try await conflictIDs(of: id, in: space)
            if let first = waiting.first {
                try await store.resolveConflict(first, keeping: .delete)
                for other in waiting.dropFirst() { try await store.dismissConflict(other) }
                return
            }
        } catch {
            throw Self.translate(error, id: id)
        }
        do {
            switch modelVersion {
            case .version1: try await store.delete(NoteVersion1.self, id: id, in: space)
            case .version2: try await store.delete(Note.self, id: id, in: space)
            }
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// The list's query in `version`: every note, oldest first; in version 2
    /// pinned notes first. Notes created in the same millisecond (on two
    /// devices) tie in this order and come by id. A note version 1 wrote has
    /// no `pinned` stored and orders as unpinned, the default it reads.
    public static func listQuery(_ version: NotesModelVersion) -> Query {
        switch version {
        case .version1: return Query(NoteVersion1.self).order(Field(\NoteVersion1.created).ascending)
        case .version2: return Query(Note.self).order(Field(\Note.pinned).descending, Field(\Note.created).ascending)
        }
    }

    /// The list's query in the version this repository runs as.
    public var listQuery: Query { Self.listQuery(modelVersion) }

    /// The notes in the list's order, the conflicts waiting, and the notes
    /// that do not decode.
    public func snapshot() async throws(NotesError) -> NotesSnapshot {
        let records: [StoreRecord]
        do throws(StoreError) {
            records = try await store.fetch(listQuery)
        } catch {
            throw Self.translate(error, id: "")
        }
        return try await snapshot(of: records)
    }

    /// Follows the list: the records of ``listQuery`` now, then again after
    /// every change that alters them (a local edit, a pull, an
    /// acknowledgement, a conflict). Read each with ``snapshot(of:)``. It
    /// ends when the store closes or the reading task is cancelled.
    public func observeList() -> QueryObservation {
        store.observe(listQuery)
    }

    /// The snapshot of the list whose records are `records` (results of
    /// ``listQuery``, in its order), decoded as this version's notes.
    public func snapshot(of records: [StoreRecord]) async throws(NotesError) -> NotesSnapshot {
        var notes: [ListedNote] = []
        var undecodable: [UndecodableRecord] = []
        do throws(StoreError) {
            let names = Dictionary(try await store.spaces().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            // One record at a time, so each listed note keeps its record's space.
            for record in records {
                var listed: [ListedNote]
                switch modelVersion {
                case .version1:
                    let typed = TypedRecords<NoteVersion1>(decoding: [record])
                    (listed, undecodable) = (typed.values.map(ListedNote.init), undecodable + typed.undecodable)
                case .version2:
                    let typed = TypedRecords<Note>(decoding: [record])
                    (listed, undecodable) = (typed.values.map(ListedNote.init), undecodable + typed.undecodable)
                }
                for index in listed.indices where !record.space.isPersonal {
                    listed[index].space = record.space
                    listed[index].spaceName = names[record.space] ?? record.space.description
                }
                let attached = Self.attachments(in: record.fields)
                if !attached.isEmpty {
                    var shown: [ListedAttachment] = []
                    for (name, attachment) in attached.sorted(by: { $0.key < $1.key }) {
                        shown.append(ListedAttachment(name: name, attachment: attachment, isLocal: try await store.attachmentFile(attachment) != nil))
                    }
                    for index in listed.indices { listed[index].attachments = shown }
                }
                notes += listed
            }
            let conflicts = try await store.conflicts().filter(Self.isShown).map(Self.conflict)
            let rejected = try await store.rejections().filter { $0.operation.entity == Self.kind }.map(RejectedNoteEdit.init)
            return NotesSnapshot(notes: notes, conflicts: conflicts, unreadable: undecodable.map(\.description), rejected: rejected)
        } catch {
            throw .store(error)
        }
    }

    /// An engine that syncs notes with the server at `server` using `token`
    /// (see ``engine(transport:idlePullInterval:changeWaitTimeout:clock:)``).
    public func engine(server: URL, token: String, idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil,
                       clock: any SyncClock = ContinuousClock()) -> SyncEngine {
        engine(transport: HTTPTransport(baseURL: server, token: token), idlePullInterval: idlePullInterval,
               changeWaitTimeout: changeWaitTimeout, clock: clock)
    }

    /// An engine that syncs notes through `transport`, timing its retries
    /// with `clock`. Once started, it pulls every `idlePullInterval` while
    /// idle, and keeps a wait for server changes open for up to
    /// `changeWaitTimeout` at a time (`nil`: neither).
    public func engine(transport: any SyncTransport, idlePullInterval: Duration? = nil, changeWaitTimeout: Duration? = nil,
                       clock: any SyncClock = ContinuousClock()) -> SyncEngine {
        SyncEngine(store: store, transport: transport,
                   options: .init(kinds: [Self.kind], idlePullInterval: idlePullInterval, changeWaitTimeout: changeWaitTimeout,
                                  followsSharedSpaces: true),
                   clock: clock)
    }

    /// The user's shared space named `name` (or whose id is `name`), as this
    /// device knows it; when it knows none and `engine` is given, the server
    /// is asked for the user's spaces first (a space another user shared
    /// since the last sync).
    ///
    /// - Throws: ``NotesError/noSuchSpace(_:)``; ``NotesError/ambiguousSpace(name:ids:)``
    ///   when several spaces have that name.
    public func space(named name: String, askingServerWith engine: SyncEngine? = nil) async throws(NotesError) -> Space {
        if let known = try await knownSpace(named: name) { return known }
        if let engine {
            do throws(SyncFailure) {
                _ = try await engine.refreshSpaces()
            } catch {
                throw NotesSpaces.translate(error, server: "the server")
            }
            if let known = try await knownSpace(named: name) { return known }
        }
        throw .noSuchSpace(name)
    }

    /// The space this device knows by `name` or by id, or nil.
    private func knownSpace(named name: String) async throws(NotesError) -> Space? {
        let spaces: [Space]
        do throws(StoreError) { spaces = try await store.spaces() } catch { throw .store(error) }
        if let id = SpaceID(name), let space = spaces.first(where: { $0.id == id }) { return space }
        let named = spaces.filter { $0.name == name }
        if named.count > 1 { throw .ambiguousSpace(name: name, ids: named.map(\.id)) }
        return named.first
    }

    /// Closes the store (queued edits stay in the journal for the next run).
    public func close() async {
        try? await store.close()
    }

    /// The space of visible note `id`: the user's own notes, or the shared
    /// space that holds it (a note's id is a random UUID, so one space has it).
    private func spaceOfNote(_ id: String) async throws(StoreError) -> SpaceID? {
        if try await store.record(Self.kind, id: id) != nil { return .personal }
        return try await store.records(Self.kind, in: nil).first { $0.id == id }?.space
    }

    /// The space of note `id`, which must be visible.
    func space(ofVisibleNote id: String) async throws(NotesError) -> SpaceID {
        do throws(StoreError) {
            guard let space = try await spaceOfNote(id) else { throw .recordNotFound(RecordKey(kind: Self.kind, id: id)) }
            return space
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// ``conflictIDs(of:in:lostOnly:)``, its error as the app reports it.
    private func shownConflictIDs(of id: String, in space: SpaceID, lostOnly: Set<String>? = nil) async throws(NotesError) -> [OperationID] {
        do throws(StoreError) {
            return try await conflictIDs(of: id, in: space, lostOnly: lostOnly)
        } catch {
            throw Self.translate(error, id: id)
        }
    }

    /// The conflicts waiting on note `id` that the list shows, of the note
    /// in `space` (in any space when nil); with `lostOnly`, only edits whose
    /// lost fields are all among those named.
    private func conflictIDs(of id: String, in space: SpaceID?, lostOnly: Set<String>? = nil) async throws(StoreError) -> [OperationID] {
        try await store.conflicts().filter { conflict in
            guard Self.isShown(conflict), conflict.operation.recordID == id else { return false }
            if let space, conflict.operation.space != space { return false }
            guard let lostOnly else { return true }
            return conflict.operation.kind != .delete && Set(conflict.resolution.lostFields).isSubset(of: lostOnly)
        }.map(\.id)
    }

    /// Whether the list shows a conflict: one of a note where this device's
    /// delete, or some of its edit, was not kept (a conflict the merge
    /// resolved without losing anything is not).
    private static func isShown(_ conflict: ConflictRecord) -> Bool {
        conflict.operation.entity == kind && (conflict.operation.kind == .delete || !conflict.resolution.lostFields.isEmpty)
    }

    static func translate(_ error: StoreError, id: String) -> NotesError {
        if case .recordNotFound = error { return .noteNotFound(id: id) }
        return .store(error)
    }

    private static func translate(_ error: SyncRecordError, id: String) -> NotesError {
        switch error {
        case .notFound: return .noteNotFound(id: id)
        case .store(let error): return translate(error, id: id)
        case .undecodable(let report): return .noteUnreadable(report.description)
        case .encodingFailed, .idChanged, .kindMismatch, .invalidMigrations: return .noteUnreadable(error.description)
        }
    }

    /// The conflict as the list shows it: the text and the pin this device's
    /// edit lost (a delete loses neither: it is shown as a lost delete).
    private static func conflict(_ record: ConflictRecord) -> NoteConflict {
        var text: String?
        var pinned: Bool?
        if record.operation.kind != .delete {
            let lost = Set(record.resolution.lostFields)
            if lost.contains(textField), case .string(let value)? = record.operation.fields[textField] { text = value }
            if lost.contains(pinnedField), case .bool(let value)? = record.operation.fields[pinnedField] { pinned = value }
        }
        return NoteConflict(noteID: record.operation.recordID, lostText: text, lostPinned: pinned, shape: record.shape.description)
    }
}
