import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalCommandLine

/// `journal-crash store` and `journal-crash store-verify`: the crash test of
/// the path apps use, edits through a real ``LocalStore``.
///
/// The writer prints, each line with one write so a kill never tears it:
/// - `trying ID STATE [ID STATE ...]` before a call (one pair per record it touches),
/// - `acked ID STATE` for each record once the call has returned,
/// where STATE is `vN` (the record holds version N) or `deleted`.
/// Each editor owns its records, so the last `acked` line of a record is
/// what the store must hold after a kill; a `trying` line with no `acked`
/// after it was in flight and may be there or not, all of it or none.
package enum StoreCrash {
    /// The kind of every record the writer makes.
    package static let kind = "crashnote"

    /// What a record holds at `version`: the checker compares every field.
    package static func fields(id: String, version: Int) -> [String: FieldValue] {
        ["v": .int(Int64(version)), "note": .string("\(id) at version \(version)")]
    }

    /// One record's state in a `trying` or `acked` line.
    package enum State: Hashable, CustomStringConvertible, Sendable {
        case version(Int)
        case deleted

        package init?(_ text: Substring) {
            if text == "deleted" { self = .deleted; return }
            guard text.hasPrefix("v"), let version = Int(text.dropFirst()), version > 0 else { return nil }
            self = .version(version)
        }

        package var description: String {
            switch self {
            case .version(let version): return "v\(version)"
            case .deleted: return "deleted"
            }
        }
    }

    /// One edit an editor plans: the record and the state it leaves it in.
    struct Step {
        enum Action { case create, update, delete }
        let action: Action
        let id: String
        let state: State
    }

    /// The writer's options.
    package struct WriterOptions: Equatable, Sendable {
        package var seed: UInt64
        package var editors: Int
        package var edits: Int
        /// A negative control: print `acked`, then make the store call a few milliseconds later.
        package var ackEarly: Bool

        package init(seed: UInt64, editors: Int, edits: Int, ackEarly: Bool) {
            self.seed = seed
            self.editors = editors
            self.edits = edits
            self.ackEarly = ackEarly
        }
    }

    /// Opens the store at `path` and edits it from concurrent editors until
    /// each has made `edits` calls (or the process is killed).
    package static func write(path: String, options: WriterOptions, output: ToolOutput) async -> Int32 {
        try? FileManager.default.createDirectory(atPath: FileIO.directory(of: path), withIntermediateDirectories: true)
        let store: LocalStore
        do { store = try await LocalStore.open(path: path) } catch {
            output.error("journal-crash: \(error)\n")
            return ToolExit.cannotOpen.rawValue
        }
        guard case .ready = await store.status else {
            output.error("journal-crash: \(path): the store is not writable (\(await store.status))\n")
            return ToolExit.damage.rawValue
        }
        output.error("journal-crash: store \(path), seed \(options.seed), \(options.editors) editors\(options.ackEarly ? ", acknowledging early (negative control)" : "")\n")
        let failed = Shared<String?>(nil)
        let checkpoints = Shared(0)
        await withTaskGroup(of: Void.self) { group in
            // Checkpoints at random moments, racing the editors, until they finish.
            let checkpointer = Task {
                var random = SeededGenerator(seed: options.seed ^ 0xC4EC_4901_7700_0000)
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 2...40, using: &random)))
                        try await store.checkpoint()
                        checkpoints.withLock { $0 += 1 }
                    } catch is CancellationError {
                        return
                    } catch {
                        failed.withLock { $0 = $0 ?? "checkpoint: \(error)" }
                        return
                    }
                }
            }
            for editor in 0..<options.editors {
                group.addTask {
                    if let message = await edit(store, editor: editor, options: options, output: output, stop: { failed.withLock { $0 != nil } }) {
                        failed.withLock { $0 = $0 ?? message }
                    }
                }
            }
            await group.waitForAll()
            checkpointer.cancel()
            await checkpointer.value
        }
        output.error("journal-crash: \(checkpoints.withLock { $0 }) checkpoints\n")
        do { try await store.close() } catch {
            failed.withLock { $0 = $0 ?? "close: \(error)" }
        }
        if let message = failed.withLock({ $0 }) {
            output.error("journal-crash: \(message)\n")
            return ToolExit.damage.rawValue
        }
        return ToolExit.ok.rawValue
    }

    /// One editor's loop; returns the failure that stopped it, if any.
    private static func edit(_ store: LocalStore, editor: Int, options: WriterOptions, output: ToolOutput,
                             stop: @Sendable () -> Bool) async -> String? {
        // Each editor its own stream, so a run is reproducible from the seed
        // however the editors interleave.
        var random = SeededGenerator(seed: options.seed &+ UInt64(editor + 1) &* 0x9E37_79B9_7F4A_7C15)
        var live: [String: Int] = [:]
        var liveIDs: [String] = []
        var created = 0
        func newID() -> String {
            created += 1
            return "s\(options.seed)-e\(editor)-r\(created)"
        }
        for _ in 0..<options.edits {
            if stop() { return nil }
            let steps = plan(&random, live: live, liveIDs: liveIDs, newID: newID)
            output.standard("trying" + steps.map { " \($0.id) \($0.state)" }.joined() + "\n")
            let acks = steps.map { "acked \($0.id) \($0.state)\n" }.joined()
            if options.ackEarly {
                output.standard(acks)
                // A kill cannot lose what is already written (the kernel keeps
                // it), so the lie needs a window: the call comes a moment later,
                // as with an app that reports success and saves in the background.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 10...40, using: &random)))
            }
            do {
                if steps.count == 1 {
                    try await apply(steps[0], to: store)
                } else {
                    let edits = try await store.write { tx in
                        for step in steps {
                            switch step.action {
                            case .create: try tx.create(kind, id: step.id, fields: fields(id: step.id, version: 1))
                            case .update:
                                guard case .version(let version) = step.state else { continue }
                                try tx.update(kind, id: step.id, changes: fields(id: step.id, version: version))
                            case .delete: try tx.delete(kind, id: step.id)
                            }
                        }
                    }
                    guard edits.map(\.id) == steps.map(\.id) else {
                        return "editor \(editor): the transaction acknowledged \(edits.map(\.id)), staged \(steps.map(\.id))"
                    }
                }
            } catch {
                return "editor \(editor): \(steps.map { "\($0.id) \($0.state)" }.joined(separator: ", ")): \(error)"
            }
            // One write for the whole transaction: a kill cannot split its acks.
            if !options.ackEarly { output.standard(acks) }
            for step in steps {
                switch step.state {
                case .version(let version):
                    if live[step.id] == nil { liveIDs.append(step.id) }
                    live[step.id] = version
                case .deleted:
                    live[step.id] = nil
                    liveIDs.removeAll { $0 == step.id }
                }
            }
        }
        return nil
    }

    private static func apply(_ step: Step, to store: LocalStore) async throws(StoreError) {
        switch step.action {
        case .create: try await store.create(kind, id: step.id, fields: fields(id: step.id, version: 1))
        case .update:
            guard case .version(let version) = step.state else { return }
            try await store.update(kind, id: step.id, changes: fields(id: step.id, version: version))
        case .delete: try await store.delete(kind, id: step.id)
        }
    }

    /// The next call: one edit, or a transaction of two to four edits, each
    /// of a different record (so each record's state after it is one value).
    private static func plan(_ random: inout SeededGenerator, live: [String: Int], liveIDs: [String],
                             newID: () -> String) -> [Step] {
        let size = Int.random(in: 0..<5, using: &random) == 0 ? Int.random(in: 2...4, using: &random) : 1
        var steps: [Step] = []
        var touched: Set<String> = []
        for _ in 0..<size {
            let candidates = liveIDs.filter { !touched.contains($0) }
            let roll = Int.random(in: 0..<100, using: &random)
            if candidates.isEmpty || liveIDs.count < 3 || roll < 30 {
                let id = newID()
                steps.append(Step(action: .create, id: id, state: .version(1)))
                touched.insert(id)
            } else {
                let id = candidates[Int.random(in: 0..<candidates.count, using: &random)]
                touched.insert(id)
                if roll < 80 {
                    steps.append(Step(action: .update, id: id, state: .version((live[id] ?? 0) + 1)))
                } else {
                    steps.append(Step(action: .delete, id: id, state: .deleted))
                }
            }
        }
        return steps
    }
}
