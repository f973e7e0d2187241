import SyncJournal
import SyncJournalCommandLine

/// The `notes space` commands: shared spaces and their members, changed on
/// the server through the engine and kept in the device's journal.
struct NotesSpaces: Sendable {
    /// The device's notes.
    var repository: NotesRepository
    /// The engine that talks to the server; nil when no `--server` was given
    /// (only `space list` runs without one, from what the device knows).
    var engine: SyncEngine?
    /// The server, as given with `--server`, for messages.
    var server: String

    /// Runs a `space` action and returns what it prints.
    func run(_ action: NotesAction) async throws(NotesError) -> String {
        switch action {
        case .spaceCreate(let name):
            let space = try await change { engine throws(SyncFailure) in try await engine.createSpace(named: name) }
            return "created space \"\(space.name)\" \(space.id)\n"
        case .spaceAdd(let name, let user, let role):
            let space = try await repository.space(named: name, askingServerWith: engine)
            let changed = try await change { engine throws(SyncFailure) in try await engine.setMember(user, role: role, in: space.id) }
            return Self.line(changed)
        case .spaceRemove(let name, let user):
            let space = try await repository.space(named: name, askingServerWith: engine)
            let changed = try await change { engine throws(SyncFailure) in try await engine.removeMember(user, from: space.id) }
            return changed.map(Self.line) ?? "left space \"\(space.name)\" \(space.id)\n"
        case .spaceList(let json):
            let spaces: [Space]
            if let engine {
                do throws(SyncFailure) { spaces = try await engine.refreshSpaces() } catch { throw Self.translate(error, server: server) }
            } else {
                do throws(StoreError) { spaces = try await repository.store.spaces() } catch { throw .store(error) }
            }
            let ordered = spaces.sorted { $0.name != $1.name ? $0.name < $1.name : $0.id.description < $1.id.description }
            if json { return Self.json(ordered) + "\n" }
            if ordered.isEmpty { return "(no shared spaces)\n" }
            return ordered.map(Self.line).joined()
        default:
            preconditionFailure("\(action) is not a space command")
        }
    }

    /// Runs one membership call of the engine, its failure as the app reports it.
    private func change<Answer>(_ call: (SyncEngine) async throws(SyncFailure) -> Answer) async throws(NotesError) -> Answer {
        guard let engine else { throw .serverUnreachable(server: "(none)", reason: "no --server given") }
        do throws(SyncFailure) {
            return try await call(engine)
        } catch {
            throw Self.translate(error, server: server)
        }
    }

    /// `NAME  ID  you: ROLE  members: USER (ROLE), …`.
    static func line(_ space: Space) -> String {
        let members = space.members.map { "\($0.user) (\($0.role))" }.joined(separator: ", ")
        return "\(space.name)  \(space.id)  you: \(space.role)  members: \(members)\n"
    }

    /// One JSON array of `{"id","name","role","members":[{"user","role"}]}`,
    /// `role` being the user's own.
    static func json(_ spaces: [Space]) -> String {
        JSONText.array(spaces.map { space in
            .object([
                ("id", .string(space.id.description)),
                ("name", .string(space.name)),
                ("role", .string(space.role.rawValue)),
                ("members", .array(space.members.map { .object([("user", .string($0.user)), ("role", .string($0.role.rawValue))]) })),
            ])
        }).serialized
    }

    /// A failed membership call as the error the user sees.
    static func translate(_ failure: SyncFailure, server: String) -> NotesError {
        switch failure {
        case .transport(.spaceRefused(let refusal)): return .spaceRefused(server: server, refusal: refusal)
        case .transport(.offline): return .serverUnreachable(server: server, reason: "nothing answered (offline)")
        case .transport(.serverUnreachable(let reason)), .transport(.transient(let reason, _)):
            return .serverUnreachable(server: server, reason: reason)
        case .serverMismatch(let mismatch), .transport(.serverMismatch(let mismatch)):
            return .serverChanged(server: server, mismatch: mismatch)
        case .store(let error): return .store(error)
        default: return .syncFailed(server: server, reason: failure.description)
        }
    }
}
