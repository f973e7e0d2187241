import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalSync
import SyncJournalTesting

/// The server-reply fuzz target: what a transport returns is untrusted
/// input to the sync engine. There is no wire format yet (HTTP comes later),
/// so the fuzz bytes are decoded (``FuzzInput``) into a script: engine
/// settings, local edits, and the reply to every request the engine makes
/// (push results, pull pages, row reads, transport errors), built relative
/// to the request so that well-formed replies are common and every kind of
/// malformed one is a few bit flips away.
///
/// A ``SyncEngine`` over a ``LocalStore`` on an in-memory disk runs up to
/// three syncs against that script. The checks:
///
/// - nothing crashes and every sync ends (no more than 1,000 requests);
/// - a reply that is malformed by the protocol's rules (a push reply
///   without exactly one result per mutation, a row of another record or
///   with an empty kind, id or field name, an over-long id; a page with more
///   rows than asked, a kind not asked for, rows out of order or not after
///   the cursor, one id twice, a next cursor that is not the last row (only
///   the last page may go beyond it) or that moves back)
///   ends the sync with an error, and the store's state is exactly what it
///   was when the request was made: nothing of it is applied;
/// - any reply the engine refuses with an error leaves the state as it was
///   when that request was made;
/// - after a sync nothing is left in flight;
/// - at the end, reopening the journal rebuilds exactly the store's state.
///
/// ```swift
/// try await FuzzServerReply.run(bytes)
/// ```
package enum FuzzServerReply {
    /// The target's name, as the fuzz script and the regression directory name it.
    package static let name = "server-reply"

    static let path = "/fuzz/device.journal"
    static let kinds = ["note", "pin"]
    static let recordIDs = ["p1", "p2", "p3", "n1"]
    static let maximumRequestsPerSync = 1_000

    static func finding(_ invariant: String, _ detail: String) -> FuzzFinding {
        FuzzFinding(target: name, invariant: invariant, detail: detail)
    }

    /// Runs the script `bytes` decode to.
    ///
    /// Layout (each value one byte unless said otherwise; bytes past the end
    /// read as 0): conflict policies (pin: `b % 3`, note: `b / 3 % 3`, each
    /// server wins, client wins, merge fields); `b`: batch size `1 + b % 4`,
    /// pull limit `1 + b / 4 % 4`, permanent failures before quarantine
    /// `1 + b / 16 % 3`. Then up to three rounds (a round after the first
    /// only while bytes remain): an edit count `b % 5`, each edit one byte
    /// (`b % 3`: create, update, delete; bit 2: note, else pin; `b / 8 % 4`:
    /// the record id) and for a create or update its fields; a clock advance
    /// of `b * 10` seconds; one sync, whose requests read their replies from
    /// the bytes that follow (see `ReplyScript`, below).
    ///
    /// With `trace`, each edit, request, reply and outcome is described to it.
    ///
    /// - Throws: ``FuzzFinding`` when an invariant does not hold.
    package static func run(_ bytes: [UInt8], trace: (@Sendable (String) -> Void)? = nil) async throws(FuzzFinding) {
        var input = FuzzInput(bytes)
        let policies: [ConflictPolicy] = [.serverWins, .clientWins, .mergeFields]
        let policyByte = Int(input.byte())
        let settings = Int(input.byte())
        let disk = SimulatedDisk()
        disk.createDirectory("/fuzz")
        let options = LocalStore.Options(system: disk, clock: ManualClock(), upkeep: .off,
                                         conflictPolicies: ["pin": policies[policyByte % 3], "note": policies[policyByte / 3 % 3]],
                                         maximumPermanentFailures: 1 + settings / 16 % 3, preallocationBytes: 4096)
        let store: LocalStore
        do { store = try await LocalStore.open(path: path, options: options) } catch { throw finding("a new store opens", "\(error)") }
        // A device that has pulled before: p1, p2 and n1 with their cursors.
        let p1 = ServerRow(kind: "pin", id: "p1", fields: ["name": .string("Cafe")], updatedAt: 100)
        let p2 = ServerRow(kind: "pin", id: "p2", fields: ["name": .string("Museum"), "tags": .stringSet(["art"])], updatedAt: 110)
        let n1 = ServerRow(kind: "note", id: "n1", fields: ["text": .string("Tram 18")], updatedAt: 120)
        do {
            try await store.applyPulledPages([
                LocalStore.PulledKindPage(kind: "pin", rows: [p1, p2], cursor: PullCursor(updatedAt: 110, id: "p2")),
                LocalStore.PulledKindPage(kind: "note", rows: [n1], cursor: PullCursor(updatedAt: 120, id: "n1")),
            ])
        } catch {
            throw finding("the starting rows are kept", "\(error)")
        }

        let script = ReplyScript(store: store, trace: trace)
        let clock = ManualClock()
        let engine = SyncEngine(store: store, transport: script,
                                options: .init(kinds: kinds, batchSize: 1 + settings % 4, pullLimit: 1 + settings / 4 % 4,
                                               maximumPages: 4, maximumResyncPages: 4, jitterSeed: 1),
                                clock: clock)
        for round in 0..<3 {
            if round > 0, input.isExhausted { break }
            for _ in 0..<input.int(below: 5) {
                let edit = input.byte()
                let kind = edit & 4 != 0 ? "note" : "pin"
                let id = recordIDs[Int(edit / 8) % recordIDs.count]
                // Edits the store refuses (no such record, an empty field name) are fine: they change nothing.
                let result: Result<Void, StoreError>
                switch edit % 3 {
                case 0:
                    let fields = input.fields()
                    do { _ = try await store.create(kind, id: id, fields: fields); result = .success(()) } catch { result = .failure(error) }
                case 1:
                    let fields = input.fields()
                    do { _ = try await store.update(kind, id: id, changes: fields); result = .success(()) } catch { result = .failure(error) }
                default:
                    do { _ = try await store.delete(kind, id: id); result = .success(()) } catch { result = .failure(error) }
                }
                trace?("round \(round): \(["create", "update", "delete"][Int(edit % 3)]) \(kind)/\(id): \(result)")
            }
            _ = await clock.advance(by: .seconds(Int64(input.byte()) * 10))
            await script.begin(input)
            let outcome = await engine.sync()
            input = await script.end()
            trace?("round \(round): sync \(outcome)")
            try await checkSync(outcome, script: script, store: store)
        }

        // Everything the sync kept was journaled: replay rebuilds it exactly.
        let state: StoreState
        do { state = try await store.currentState() } catch { throw finding("the store stays readable", "\(error)") }
        do { try await store.close() } catch { throw finding("the store closes", "\(error)") }
        do {
            let replayed = try Replayer.replay(path: path, system: disk)
            if replayed.state != state { throw finding("replay rebuilds the state the syncs left", "replayed vs live: " + replayed.state.difference(from: state)) }
            if replayed.report.status != .clean { throw finding("the journal is clean after the syncs", "\(replayed.report.status)") }
        } catch let error as FuzzFinding {
            throw error
        } catch {
            throw finding("the journal replays after the syncs", "\(error)")
        }
        let reopened: LocalStore
        do { reopened = try await LocalStore.open(path: path, options: options) } catch { throw finding("the store reopens", "\(error)") }
        let again = try? await reopened.currentState()
        try? await reopened.close()
        if again != state {
            throw finding("a reopened store holds the state the syncs left", again.map { "reopened vs live: " + $0.difference(from: state) } ?? "unreadable")
        }
    }

    /// The checks after one sync.
    static func checkSync(_ outcome: SyncOutcome, script: ReplyScript, store: LocalStore) async throws(FuzzFinding) {
        let requests = await script.requests
        if requests.count > maximumRequestsPerSync {
            throw finding("a sync ends", "more than \(maximumRequestsPerSync) requests in one sync")
        }
        let state: StoreState
        do { state = try await store.currentState() } catch { throw finding("the store stays readable", "\(error)") }
        for entry in state.outbox.operations where await store.isInFlight(entry.id) {
            throw finding("nothing is in flight after a sync", "operation \(entry.id) after \(outcome)")
        }
        // A malformed reply ends the sync with an error, and nothing of it is
        // kept. (The engine may still read the rest of a resync before it
        // refuses the whole, so the reply need not be the last one.)
        if let index = requests.firstIndex(where: { $0.malformed != nil }) {
            let request = requests[index]
            guard case .failed = outcome else {
                throw finding("a malformed reply is an error", "\(request.malformed!): the sync ended \(outcome)")
            }
            if request.stateBefore != state {
                throw finding("a malformed reply applies nothing",
                              "\(request.malformed!): the state changed since the \(request.isPush ? "push" : "pull") was sent: "
                                + state.difference(from: request.stateBefore ?? StoreState()))
            }
        }
        // A reply (not a transport error) that ends the sync with an error was refused whole.
        if let last = requests.last, !last.threw, case .failed(let failure) = outcome, !failure.reachedPageLimit {
            if last.stateBefore != state {
                throw finding("a refused reply applies nothing",
                              "the sync ended \"\(failure)\" but the state changed since the \(last.isPush ? "push" : "pull") was sent: "
                                + state.difference(from: last.stateBefore ?? StoreState()))
            }
        }
    }
}

/// The scripted server: answers each request from the fuzz bytes, and
/// records for each push and pull the store's state when it was made and
/// whether the reply breaks the protocol's rules.
actor ReplyScript: SyncTransport {
    /// One push or pull of the current sync.
    struct Request {
        var isPush: Bool
        /// The store's state when the request was made (before its reply could be kept).
        var stateBefore: StoreState?
        /// Why the reply breaks the protocol, by the rules restated here.
        var malformed: String?
        /// Whether the reply was a transport error.
        var threw: Bool
    }

    private let store: LocalStore
    private let trace: (@Sendable (String) -> Void)?
    private var input = FuzzInput([])
    private(set) var requests: [Request] = []

    init(store: LocalStore, trace: (@Sendable (String) -> Void)?) {
        self.store = store
        self.trace = trace
    }

    private func record(_ request: Request, _ text: String) {
        requests.append(request)
        trace?("  \(request.isPush ? "push" : "pull") -> \(text)\(request.malformed.map { " [malformed: \($0)]" } ?? "")")
    }

    /// Takes over the input for one sync.
    func begin(_ input: FuzzInput) {
        self.input = input
        requests = []
    }

    /// Gives the input back after the sync.
    func end() -> FuzzInput { input }

    /// The reply to a push, one byte `b` deciding its shape: `b % 8 == 4` a
    /// transport error; 5 a result list with one result missing, 6 one
    /// result twice, 7 one result for an unknown operation; otherwise one
    /// result per mutation in order, each from ``outcome(for:)``.
    func push(_ mutations: [Mutation]) async throws(TransportError) -> [MutationResult] {
        let before = try? await store.currentState()
        let shape = input.byte() % 8
        if shape == 4 {
            let error = transportError()
            record(Request(isPush: true, stateBefore: before, malformed: nil, threw: true), "\(mutations.count) mutations, error \(error)")
            throw error
        }
        var results = mutations.map { MutationResult(operationID: $0.operationID, outcome: outcome(for: $0)) }
        if !results.isEmpty, shape >= 5 {
            let index = input.int(below: results.count)
            switch shape {
            case 5: results.remove(at: index)
            case 6: results.append(results[index])
            case 7: results[index].operationID = OperationID(bytes: input.bytes(16))!
            default: break
            }
        }
        record(Request(isPush: true, stateBefore: before, malformed: Self.malformedPush(results, for: mutations), threw: false),
               "\(mutations.map { "\($0.op) \($0.kind)/\($0.recordID)" }) answered \(results.map(\.outcome))")
        return results
    }

    /// One mutation's outcome, one byte `o`: `o % 8` 0 or 1 applied, 2
    /// conflict, 3 rejected, 4 duplicate, 5 no match, 6 applied with any
    /// row, 7 applied with a tombstone; bit 3: the row's fields come from the
    /// bytes, bit 4: its stamp does; bit 5 (conflict): no server copy.
    func outcome(for mutation: Mutation) -> MutationOutcome {
        let choice = input.byte()
        var row = ServerRow(kind: mutation.kind, id: mutation.recordID,
                            fields: choice & 8 != 0 ? input.fields() : mutation.fields,
                            updatedAt: choice & 16 != 0 ? input.int64() : (mutation.baseUpdatedAt ?? 1_000) &+ 1)
        if mutation.op == .delete { row.fields = [:]; row.deletedAt = row.updatedAt }
        switch choice % 8 {
        case 2: return .conflict(server: choice & 32 != 0 ? nil : row)
        case 3: return .rejected(reason: input.string(["forbidden", "busy"]), permanent: input.bool())
        case 4: return .duplicate
        case 5: return .noMatch
        case 6: return .applied(anyRow())
        case 7:
            row.fields = [:]
            row.deletedAt = row.updatedAt
            return .applied(row)
        default: return .applied(row)
        }
    }

    /// A row with every part from the bytes.
    func anyRow() -> ServerRow {
        let kind = input.string(FuzzServerReply.kinds + ["secret"])
        let id = input.string(FuzzServerReply.recordIDs + [String(repeating: "x", count: 65)])
        let updatedAt = input.int64()
        let deleted = input.bool()
        return ServerRow(kind: kind, id: id, fields: deleted ? [:] : input.fields(), updatedAt: updatedAt,
                         deletedAt: deleted ? updatedAt : nil)
    }

    /// A transport error, one byte: offline, transient, permanent, too large, cursor expired.
    func transportError() -> TransportError {
        switch input.byte() % 5 {
        case 0: return .offline
        case 1: return .transient(reason: input.string(["503"]), retryAfter: input.bool() ? .milliseconds(input.int64()) : nil)
        case 2: return .permanent(reason: input.string(["403"]))
        case 3: return .tooLarge(reason: input.string(["413"]))
        default:
            let mask = input.byte()
            return .cursorExpired(kinds: (FuzzServerReply.kinds + ["secret"]).enumerated().filter { mask >> UInt8($0.offset) & 1 == 1 }.map(\.element))
        }
    }

    /// The reply to a pull, one byte `b`: `b % 8 == 5` a transport error;
    /// otherwise a page of `byte % 6` rows. Each row one byte `r`: its kind
    /// `r % 4` (the requested kinds in order, then `secret`, then any
    /// string), its stamp the previous row's of that kind (or the cursor's)
    /// plus `r / 4 % 4` (or, with bit 5, any stamp), bit 4 a tombstone; then
    /// its id and fields. Then per kind with rows one byte (`% 4 == 3`: a
    /// cursor from the bytes, else the cursor after its last row), one byte
    /// (`% 4 == 3`: an extra cursor for some kind), and `hasMore`.
    func pull(_ request: PullRequest) async throws(TransportError) -> PullPage {
        let before = try? await store.currentState()
        let shape = input.byte() % 8
        if shape == 5 {
            let error = transportError()
            record(Request(isPush: false, stateBefore: before, malformed: nil, threw: true), "\(request.cursors), error \(error)")
            throw error
        }
        let requested = request.cursors.keys.sorted()
        var last: [String: PullCursor] = [:]
        var order: [String] = []
        var rows: [ServerRow] = []
        for _ in 0..<input.int(below: 6) {
            let choice = input.byte()
            let kind: String
            switch Int(choice % 4) {
            case let index where index < requested.count: kind = requested[index]
            case 2: kind = "secret"
            default: kind = input.string(FuzzServerReply.kinds)
            }
            let previous = last[kind] ?? (request.cursors[kind] ?? nil)
            let updatedAt = choice & 32 != 0 ? input.int64() : (previous?.updatedAt ?? 0) &+ Int64(choice / 4 % 4)
            let id = input.string(FuzzServerReply.recordIDs + ["a", "b", "z"])
            let deleted = choice & 16 != 0
            rows.append(ServerRow(kind: kind, id: id, fields: deleted ? [:] : input.fields(), updatedAt: updatedAt,
                                  deletedAt: deleted ? updatedAt : nil))
            if last[kind] == nil { order.append(kind) }
            last[kind] = PullCursor(updatedAt: updatedAt, id: id)
        }
        var cursors: [String: PullCursor] = [:]
        for kind in order {
            cursors[kind] = input.byte() % 4 == 3 ? PullCursor(updatedAt: input.int64(), id: input.string(FuzzServerReply.recordIDs)) : last[kind]
        }
        if input.byte() % 4 == 3 {
            cursors[input.string(FuzzServerReply.kinds + ["secret"])] = PullCursor(updatedAt: input.int64(), id: input.string(["a"]))
        }
        let page = PullPage(rows: rows, nextCursors: cursors, hasMore: input.bool())
        record(Request(isPush: false, stateBefore: before, malformed: Self.malformedPage(page, for: request), threw: false),
               "\(request.cursors) limit \(request.limit) answered \(page.rows.map { "\($0.kind)/\($0.id)@\($0.updatedAt)\($0.isTombstone ? " deleted" : "")" }) next \(page.nextCursors) more \(page.hasMore)")
        return page
    }

    /// A row read back, one byte: `% 4` 0 the live row (fields and stamp from
    /// the bytes), 1 none, 2 a tombstone, 3 a transport error.
    func read(kind: String, id: String) async throws(TransportError) -> ServerRow? {
        let row: ServerRow?
        switch input.byte() % 4 {
        case 0: row = ServerRow(kind: kind, id: id, fields: input.fields(), updatedAt: input.int64())
        case 1: row = nil
        case 2:
            let stamp = input.int64()
            row = ServerRow(kind: kind, id: id, updatedAt: stamp, deletedAt: stamp)
        default:
            let error = transportError()
            trace?("  read \(kind)/\(id) -> error \(error)")
            throw error
        }
        trace?("  read \(kind)/\(id) -> \(row.map { "\($0.updatedAt)\($0.isTombstone ? " deleted" : "") \($0.fields)" } ?? "none")")
        return row
    }

    // MARK: The protocol's rules, restated

    /// Why a row may not be kept, by `journals/FORMAT.md` and the store's rules.
    static func rowProblem(_ row: ServerRow) -> String? {
        if row.kind.isEmpty { return "a row with an empty kind" }
        if row.id.isEmpty || row.id.utf8.count > JournalOperation.maximumRecordIDLength { return "a row id of \(row.id.utf8.count) bytes" }
        if row.fields.keys.contains("") { return "a row with an empty field name" }
        return nil
    }

    /// Why a push reply is malformed, or `nil`.
    static func malformedPush(_ results: [MutationResult], for mutations: [Mutation]) -> String? {
        if results.count != mutations.count { return "\(results.count) results for \(mutations.count) mutations" }
        let byID = Dictionary(mutations.map { ($0.operationID, $0) }, uniquingKeysWith: { first, _ in first })
        var seen = Set<OperationID>()
        for result in results {
            guard let mutation = byID[result.operationID] else { return "a result for an operation not sent" }
            if !seen.insert(result.operationID).inserted { return "two results for one operation" }
            let row: ServerRow?
            switch result.outcome {
            case .applied(let applied): row = applied
            case .conflict(let server): row = server
            case .rejected, .duplicate, .noMatch: row = nil
            }
            if let row {
                if let problem = rowProblem(row) { return problem }
                if row.kind != mutation.kind || row.id != mutation.recordID { return "a row of another record" }
            }
        }
        return nil
    }

    /// Why a pull page is malformed for `request`, or `nil`.
    static func malformedPage(_ page: PullPage, for request: PullRequest) -> String? {
        if page.rows.count > request.limit { return "\(page.rows.count) rows for a limit of \(request.limit)" }
        var last: [String: PullCursor] = [:]
        var ids: [String: Set<String>] = [:]
        for row in page.rows {
            guard let cursor = request.cursors[row.kind] else { return "a row of a kind not asked for" }
            if let problem = rowProblem(row) { return problem }
            let position = PullCursor(updatedAt: row.updatedAt, id: row.id)
            if let previous = last[row.kind] ?? cursor, !(previous < position) { return "rows out of order or not after the cursor" }
            if !ids[row.kind, default: []].insert(row.id).inserted { return "one id twice in a page" }
            last[row.kind] = position
        }
        for (kind, next) in page.nextCursors where last[kind] == nil {
            guard let current = request.cursors[kind] else { return "a cursor for a kind not asked for" }
            if let current, next < current { return "a cursor that moves back" }
        }
        // The cursor is the last row's position; only the last page may go beyond it (`PullPage.nextCursors`).
        for (kind, position) in last {
            guard let next = page.nextCursors[kind] else { return "no next cursor for a kind with rows" }
            if next != position && (page.hasMore || next < position) { return "a next cursor that is not the last row" }
        }
        return nil
    }
}

extension FuzzServerReply {
    /// Hand-made inputs, one per kind of exchange, so the fuzzer starts from
    /// scripts that reach every path (the byte layout is in ``run(_:trace:)``
    /// and ``ReplyScript``). Settings byte 15: batch 4, pull limit 4, one
    /// permanent failure quarantines.
    package static let seeds: [(name: String, bytes: [UInt8])] = [
        // Nothing queued; an empty page.
        ("empty", []),
        // create pin/p3, update pin/p1, delete note/n1; all applied; an empty page.
        ("edits-applied", [0, 15, 3, 18, 1, 0, 4, 0, 1, 1, 16, 2, 0, 7, 29, 0,
                           0, 0, 0, 0,
                           0, 0, 0, 0]),
        // A page of three rows over two kinds, with the cursors after them.
        ("pull-rows", [0, 15, 0, 0,
                       0, 3, 5, 16, 1, 0, 4, 0, 4, 32, 0, 9, 0, 0, 0, 0, 0, 0]),
        // pin is client-wins: update p1, a conflict with a server copy, the replacement applied.
        ("conflict-client-wins", [1, 15, 1, 1, 1, 0, 4, 8, 0,
                                  0, 10, 1, 0, 4, 0,
                                  0, 0,
                                  0, 0, 0, 0]),
        // Two edits, a push reply missing the second result: malformed, nothing kept.
        ("malformed-push-missing-result", [0, 15, 2, 18, 1, 0, 4, 0, 10, 1, 8, 6, 2, 0, 8, 0,
                                           5, 0, 0, 1]),
        // A page whose second row repeats the first: malformed, nothing kept.
        ("malformed-pull-repeated-row", [0, 15, 0, 0,
                                         0, 2, 9, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
        // Cursors expired for both kinds: each is re-pulled from the start (note gets n1, pin nothing).
        ("resync", [0, 15, 0, 0,
                    5, 4, 3,
                    0, 1, 4, 24, 0, 0, 0, 0,
                    0, 0, 0, 0,
                    0, 0, 0, 0]),
        // A create answered "duplicate": read back, the same fields, acknowledged.
        ("duplicate-read-back", [0, 15, 1, 18, 1, 0, 4, 0, 0,
                                 0, 4,
                                 0, 1, 0, 4, 0, 0, 50,
                                 0, 0, 0, 0]),
        // A batch of two refused as too large: split, each half applied.
        ("too-large-split", [0, 15, 2, 18, 1, 0, 4, 0, 10, 1, 8, 6, 2, 0, 8, 0,
                             4, 3, 0,
                             0, 0,
                             0, 0,
                             0, 0, 0, 0]),
        // A transient push error, then 42 minutes later the retry is applied.
        ("transient-then-retry", [0, 15, 1, 18, 1, 0, 4, 0, 0,
                                  4, 1, 0, 0,
                                  0, 255,
                                  0, 0,
                                  0, 0, 0, 0]),
        // A delete answered "no match", nothing to read back: acknowledged as gone.
        ("no-match-delete", [0, 15, 1, 2, 0,
                             0, 5,
                             1,
                             0, 0, 0, 0]),
        // A permanent rejection quarantines the update at once.
        ("permanent-rejection", [0, 15, 1, 1, 1, 0, 4, 0, 0,
                                 0, 3, 0, 1,
                                 0, 0, 0, 0]),
    ]
}
