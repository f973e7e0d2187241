import Foundation
import SyncJournalProtocol
import SyncJournalStore

extension StoreCrash {
    /// Why the check could not be made (as opposed to finding a loss).
    package enum CheckError: Error, CustomStringConvertible, Sendable {
        /// A complete line of the writer's output that is neither `trying` nor `acked`.
        case malformedLine(number: Int, text: String)
        /// The writer's output could not be read.
        case cannotReadLog(path: String, reason: String)
        /// The store could not be opened.
        case cannotOpen(path: String, cause: StoreError)
        /// The store opened but cannot be read.
        case unreadable(path: String, status: String)

        package var description: String {
            switch self {
            case .malformedLine(let number, let text): return "line \(number) of the writer's output is not `trying` or `acked`: \(text.prefix(80))"
            case .cannotReadLog(let path, let reason): return "cannot read the writer's output \(path): \(reason)"
            case .cannotOpen(let path, let cause): return "cannot open the store at \(path): \(cause)"
            case .unreadable(let path, let status): return "the store at \(path) opened \(status)"
            }
        }
    }

    /// What the writer's output promises, record by record.
    package struct Expectations: Sendable {
        /// The last acknowledged state of each record.
        package var acknowledged: [String: State] = [:]
        /// The state an in-flight call (a `trying` line with no `acked` after it) would leave, and which call.
        package var inFlight: [String: (state: State, call: Int)] = [:]
        /// `acked` lines read.
        package var acknowledgedEdits = 0
        /// Every record the output names, in the order first named.
        package var records: [String] = []
    }

    /// Reads the writer's output. Only complete lines count: a line a kill
    /// cut short was never fully printed.
    package static func expectations(from log: String) throws(CheckError) -> Expectations {
        var lines = log.split(separator: "\n", omittingEmptySubsequences: false)
        // The last piece is either empty (the log ends with a newline) or cut short.
        lines.removeLast()
        var result = Expectations()
        var named: Set<String> = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            let words = line.split(separator: " ")
            let pairs = words.dropFirst()
            guard pairs.count >= 2, pairs.count % 2 == 0, words[0] == "trying" || (words[0] == "acked" && pairs.count == 2) else {
                throw .malformedLine(number: index + 1, text: String(line))
            }
            var i = pairs.startIndex
            while i < pairs.endIndex {
                let id = String(pairs[i])
                guard let state = State(pairs[i + 1]) else { throw .malformedLine(number: index + 1, text: String(line)) }
                if named.insert(id).inserted { result.records.append(id) }
                if words[0] == "acked" {
                    result.acknowledged[id] = state
                    result.inFlight[id] = nil
                    result.acknowledgedEdits += 1
                } else {
                    result.inFlight[id] = (state, index)
                }
                i += 2
            }
        }
        return result
    }

    /// The outcome of a check.
    package struct Verification: Sendable {
        /// Records with an acknowledged state.
        package var recordsAcknowledged = 0
        /// `acked` lines.
        package var editsAcknowledged = 0
        /// In-flight calls, and how many of them the store holds.
        package var callsInFlight = 0
        package var callsInFlightPresent = 0
        /// One line per record whose state is neither its acknowledged one nor its in-flight one.
        package var lost: [String] = []
        /// One line per in-flight transaction the store holds only part of.
        package var torn: [String] = []

        package var passed: Bool { lost.isEmpty && torn.isEmpty }

        package var summary: String {
            "store check: records acknowledged \(recordsAcknowledged), edits acknowledged \(editsAcknowledged), "
                + "calls in flight \(callsInFlight) (present \(callsInFlightPresent)), lost \(lost.count), torn transactions \(torn.count)"
        }
    }

    /// Reopens the store at `path` (read-only with `readOnly`, which leaves
    /// the file as it is) and checks it against the writer's output `log`.
    package static func verify(path: String, log: String, readOnly: Bool = false) async throws(CheckError) -> Verification {
        let expected = try expectations(from: log)
        let store: LocalStore
        var options = LocalStore.Options()
        options.readOnly = readOnly
        do { store = try await LocalStore.open(path: path, options: options) } catch { throw .cannotOpen(path: path, cause: error) }
        guard case .ready = await store.status else {
            let status = "\(await store.status)"
            try? await store.close()
            throw .unreadable(path: path, status: status)
        }
        let records: [StoreRecord]
        do { records = try await store.records(kind) } catch {
            try? await store.close()
            throw .cannotOpen(path: path, cause: error)
        }
        let found = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        try? await store.close()

        var result = Verification()
        result.recordsAcknowledged = expected.acknowledged.count
        result.editsAcknowledged = expected.acknowledgedEdits
        // nil: a record whose fields match no version the writer wrote.
        func state(of id: String) -> State? {
            guard let record = found[id] else { return .deleted }
            guard case .int(let version)? = record.fields["v"], version > 0,
                  record.fields == fields(id: id, version: Int(version)) else { return nil }
            return .version(Int(version))
        }
        var calls: [Int: (arrived: [String], stayed: [String])] = [:]
        for id in expected.records {
            let before = expected.acknowledged[id] ?? .deleted
            let now = state(of: id)
            let described = now.map(\.description) ?? "fields \(found[id]?.fields.description ?? "none")"
            if let flight = expected.inFlight[id] {
                if now == flight.state { calls[flight.call, default: ([], [])].arrived.append(id); continue }
                if now == before { calls[flight.call, default: ([], [])].stayed.append(id); continue }
                result.lost.append("lost \(id): acknowledged \(expected.acknowledged[id]?.description ?? "nothing"), in flight \(flight.state), found \(described)")
            } else if now != before {
                result.lost.append("lost \(id): acknowledged \(expected.acknowledged[id]?.description ?? "nothing"), found \(described)")
            }
        }
        result.callsInFlight = calls.count
        for (call, records) in calls.sorted(by: { $0.key < $1.key }) {
            if !records.arrived.isEmpty { result.callsInFlightPresent += 1 }
            if !records.arrived.isEmpty && !records.stayed.isEmpty {
                result.torn.append("torn transaction (line \(call + 1)): \(records.arrived.sorted()) written, \(records.stayed.sorted()) not")
            }
        }
        return result
    }
}
