import Foundation
import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore

/// `journal-dump [--json] [--verify] [--state] PATH`: shows any journal,
/// healthy or damaged, without changing it. `--state` adds the state a store
/// rebuilds by replaying it (``Replayer``).
///
/// Exit status: 0 clean, 1 damage found (or, with `--state`, a state that
/// cannot be rebuilt), 3 unsupported (intact, but holding something only a
/// newer version understands), 64 usage error, 65 not a journal (bad magic or
/// unknown major version), 66 the file cannot be opened.
public struct JournalDumpCommand: Sendable {
    /// Parsed command-line options.
    public struct Options: Sendable, Hashable {
        /// JSON Lines instead of text.
        public var json = false
        /// Print only the summary.
        public var verifyOnly = false
        /// Also print the state replay rebuilds.
        public var state = false
        /// The journal to read.
        public var path: String
    }

    /// The usage text.
    public static let usage = """
        usage: journal-dump [--json] [--verify] [--state] PATH
          --json    one JSON object per record, then a {"summary": …} line
          --verify  print only the summary
          --state   after the summary, the state replay rebuilds: records per kind,
                    the outbox in order (each operation queued, sent or quarantined,
                    with attempts, permanent failures and its last failure), cursors,
                    base rows, conflicts (shape, policy, replacement, lost fields),
                    rejections; with --json one {"state": …} object, the last line
        exit status: 0 clean, 1 damage found (or a state that cannot be rebuilt),
                     3 unsupported (intact, but a newer version wrote it: read-only),
                     64 usage error, 65 not a journal, 66 cannot open

        """

    /// Parses arguments (without the program name).
    public static func parse(_ arguments: [String]) -> Options? {
        var json = false
        var verify = false
        var state = false
        var path: String?
        for argument in arguments {
            switch argument {
            case "--json": json = true
            case "--verify": verify = true
            case "--state": state = true
            default:
                if argument.hasPrefix("-") && argument != "-" { return nil }
                if path != nil { return nil }
                path = argument
            }
        }
        guard let path else { return nil }
        return Options(json: json, verifyOnly: verify, state: state, path: path)
    }

    /// Runs the command and returns its exit status.
    public static func run(arguments: [String], output: ToolOutput) -> Int32 {
        guard let options = parse(arguments) else {
            if arguments == ["--help"] || arguments == ["-h"] {
                output.standard(usage)
                return ToolExit.ok.rawValue
            }
            output.error(usage)
            return ToolExit.usage.rawValue
        }
        return run(options, output: output).rawValue
    }

    /// Runs the command with parsed options.
    public static func run(_ options: Options, output: ToolOutput) -> ToolExit {
        let reader = JournalReader(path: options.path, understands: StoreEvent.isUnderstood)
        var malformed = 0
        var unsupported = 0
        var headerPrinted = false
        var fold = Replayer.Fold()
        var foldFailure: Replayer.Failure?
        let report: JournalScanReport
        do {
            let header = try reader.header()
            if !options.json {
                output.standard("journal:  \(options.path)\n")
                output.standard("header:   " + (header.map(headerText) ?? "damaged") + "\n")
            }
            report = try reader.scan { record in
                if !options.json && !options.verifyOnly && !headerPrinted {
                    headerPrinted = true
                    output.standard(tableHeading(syncHorizons: record.syncHorizon != nil))
                }
                if options.state && foldFailure == nil {
                    do throws(Replayer.Failure) { try fold.fold(record) } catch { foldFailure = error }
                }
                var entry: JournalEntry?
                var event: StoreEvent?
                var problem: String?
                do throws(JournalEntry.DecodeError) {
                    (entry, event) = try decode(record)
                } catch {
                    entry = nil
                    event = nil
                    problem = error.description
                    if case .unsupportedType = error { unsupported += 1 } else { malformed += 1 }
                }
                guard !options.verifyOnly else { return }
                if options.json {
                    output.standard(jsonLine(record, entry, event, problem).serialized + "\n")
                } else {
                    output.standard(textLines(record, entry, event, problem))
                }
            }
        } catch let error as JournalError {
            switch error {
            case .notAJournal, .unsupportedVersion:
                output.error("journal-dump: \(error)\n")
                return .notAJournal
            default:
                output.error("journal-dump: \(error)\n")
                return .cannotOpen
            }
        } catch {
            output.error("journal-dump: \(error)\n")
            return .cannotOpen
        }

        // For damaged journals, how much a salvage could still recover beyond the prefix.
        var after = 0
        if case .corrupt = report.status, report.header != nil {
            after = (try? reader.recordsAfterDamage().count) ?? 0
        }
        if options.json {
            output.standard(jsonSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after).serialized + "\n")
        } else {
            output.standard(textSummary(report, malformed: malformed, unsupported: unsupported, recordsAfterDamage: after))
        }
        var stateRebuilt = true
        if options.state {
            // As Replayer.replay decides: corruption or an unfinished checkpoint means no state.
            if foldFailure == nil, case .corrupt = report.status { foldFailure = .corrupt(report.status) }
            // Nor is a state rebuilt that would skip a record this version does not understand.
            if foldFailure == nil, case .unsupported(let offset, let reason) = report.status {
                foldFailure = .unsupported(offset: offset, reason: reason)
            }
            if foldFailure == nil {
                do throws(Replayer.Failure) { try fold.finish(header: report.header) } catch { foldFailure = error }
            }
            let state: Result<StoreState, Replayer.Failure> = foldFailure.map { .failure($0) } ?? .success(fold.state)
            stateRebuilt = foldFailure == nil
            if options.json {
                output.standard(jsonState(state).serialized + "\n")
            } else {
                output.standard(textState(state, records: fold.records))
            }
        }
        if case .unsupported = report.status { return .unsupported }
        if report.status != .clean || malformed > 0 || unsupported > 0 || !stateRebuilt { return .damage }
        return .ok
    }

    // MARK: Text

    /// The heading of the record table. A format-2 journal's table has a
    /// `horizon` column after `seq`; a 1.x journal's records carry none, so
    /// its table is the one 1.x dumps always had.
    static func tableHeading(syncHorizons: Bool) -> String {
        pad("offset", 9, right: true) + "  " + pad("seq", 6, right: true) + "  "
            + (syncHorizons ? pad("horizon", 9, right: true) + "  " : "")
            + pad("type", 10) + pad("op", 7) + pad("kind", 10) + pad("record", 18) + pad("base", 15) + "fields\n"
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        if text.count >= width { return right ? text : text + " " }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }

    /// A verified record as the dump shows it: the ``JournalEntry`` and, for
    /// the store's own records (sent markers, outcomes, pulled rows,
    /// checkpoints), their event.
    ///
    /// ``StoreEvent/decode(_:)`` is the authority on what a store record is,
    /// as it is for replay: a type ``JournalEntry`` does not list (the 1.1
    /// types `0x0009`…`0x000D`, `0x0103`) but the store decodes is shown as its
    /// event, never counted as unsupported. Only a type neither knows, without
    /// the skippable bit, is unsupported.
    static func decode(_ record: JournalRecord) throws(JournalEntry.DecodeError) -> (JournalEntry, StoreEvent?) {
        let entry: JournalEntry
        do {
            entry = try JournalEntry.decode(record)
        } catch {
            guard case .unsupportedType = error, let event = try StoreEvent.decode(record) else { throw error }
            return (.opaque(record.type), event)
        }
        if case .opaque = entry { return (entry, try storeEvent(record)) }
        return (entry, nil)
    }

    /// The store event of a record ``JournalEntry`` leaves opaque: `nil` for
    /// a type the store does not journal (a reserved or skippable one, shown as opaque).
    static func storeEvent(_ record: JournalRecord) throws(JournalEntry.DecodeError) -> StoreEvent? {
        do {
            return try StoreEvent.decode(record)
        } catch {
            if case .unsupportedType = error { return nil }
            throw error
        }
    }

    /// The columns of an operation: op, kind, record, base, fields.
    static func operationColumns(_ op: JournalOperation) -> String {
        pad(op.kind.description, 7) + pad(op.entity, 10) + pad(op.recordID, 18)
            + pad(op.baseUpdatedAt.map { String($0) } ?? "-", 15) + FieldSummary.text(op.fields)
    }

    /// The same columns for a server row: `row` or `deleted`, kind, id, its server stamp, fields.
    static func rowColumns(_ row: ServerRow) -> String {
        pad(row.isTombstone ? "deleted" : "row", 7) + pad(row.kind, 10) + pad(row.id, 18) + pad(String(row.updatedAt), 15)
            + (row.isTombstone ? "deleted at \(row.deletedAt!)" : FieldSummary.text(row.fields))
    }

    /// The indentation of a record's second and later lines, under the
    /// columns of `offset`, `seq`, (format 2) `horizon` and `type`.
    static func continuation(syncHorizons: Bool) -> String {
        pad("", 9) + "  " + pad("", 6) + "  " + (syncHorizons ? pad("", 9) + "  " : "") + pad("  ·", 10)
    }

    static func quoted(_ text: String) -> String { JSONText.string(text).serialized }

    static func textLines(_ record: JournalRecord, _ entry: JournalEntry?, _ event: StoreEvent?, _ problem: String?) -> String {
        let horizon = record.syncHorizon.map { pad(String($0), 9, right: true) + "  " } ?? ""
        let prefix = pad(String(record.offset), 9, right: true) + "  " + pad(String(record.sequence), 6, right: true) + "  "
            + horizon + pad(record.type.name, 10)
        let indent = continuation(syncHorizons: record.syncHorizon != nil)
        if let problem { return prefix + "!! " + problem + "\n" }
        if let event { return prefix + eventText(event, continuation: indent) }
        switch entry {
        case .operation(let op)?:
            return prefix + operationColumns(op) + "\n"
        case .batch(let ops)?:
            var lines = prefix + "(\(ops.count) operations)\n"
            for op in ops { lines += indent + operationColumns(op) + "\n" }
            return lines
        case .salvaged(let offset, let sequence, let type, let payload)?:
            return prefix + "copied from offset \(offset), seq \(sequence), type \(type.name), \(payload.count) bytes\n"
        case .opaque(.syncHorizon)?:
            return prefix + "(a writer closed here: every record before it is durable)\n"
        case .opaque(let type)?:
            return prefix + "(\(record.payload.count) payload bytes, type \(type) not shown)\n"
        case nil:
            return prefix + "\n"
        }
    }

    /// The text of a store event after the record's prefix: its first line and any further lines.
    static func eventText(_ event: StoreEvent, continuation: String = continuation(syncHorizons: false)) -> String {
        func lines(_ first: String, _ more: [String]) -> String {
            ([first] + more.map { continuation + $0 }).joined(separator: "\n") + "\n"
        }
        switch event {
        case .edit(let op, let steps):
            return lines(operationColumns(op), steps.map { step in
                switch step {
                case .remove(let id): return "compaction: remove \(id)"
                case .replace(let id, let merged): return "compaction: replace \(id) with " + operationColumns(merged)
                }
            })
        case .editBatch(let ops):
            return lines("(\(ops.count) operations)", ops.map(operationColumns))
        case .sent(let ids):
            return lines("(\(ids.count) operation\(ids.count == 1 ? "" : "s") may have reached the server)", ids.map(\.description))
        case .withdrawn(let ids):
            return lines("(\(ids.count) operation\(ids.count == 1 ? "" : "s") never left the device: unsent again)", ids.map(\.description))
        case .acknowledged(let acks):
            return lines("(\(acks.count) acknowledged)", acks.map { rowColumns($0.row) + "  for \($0.operationID)" })
        case .failed(let id, let reason, let permanent):
            return lines("\(id) " + (permanent ? "rejected for good" : "failed, will be retried") + ": " + quoted(reason), [])
        case .conflicted(let id, let server):
            return lines("\(id) conflicts; " + (server == nil ? "the server deleted the record" : "the server's copy wins:"),
                         server.map { [rowColumns($0)] } ?? [])
        case .pulled(let kind, let rows, let cursor):
            return lines("(\(rows.count) \(kind) row\(rows.count == 1 ? "" : "s"), cursor \(cursor.map(\.description) ?? "unchanged"))",
                         rows.map(rowColumns))
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            let outcome = !quarantine ? "stays queued" : kind == .deletedOrNoAccess ? "quarantined; the device forgets its copy of the row" : "quarantined"
            return lines("\(id) failed (\(kind)), \(outcome): " + quoted(reason), [])
        case .released(let id):
            return lines("\(id) released from quarantine by the app: sent again, with a fresh budget", [])
        case .discarded(let id):
            return lines("\(id) discarded by the app: it leaves the queue unsent", [])
        case .conflictDismissed(let id):
            return lines("conflict \(id) dismissed by the app (its resolution stands)", [])
        case .conflictSettled(let id, let op, let steps):
            return lines("conflict \(id) settled by the app with its own edit:", [operationColumns(op)] + steps.map { step in
                switch step {
                case .remove(let id): return "compaction: remove \(id)"
                case .replace(let id, let merged): return "compaction: replace \(id) with " + operationColumns(merged)
                }
            })
        case .conflictResolved(let id, let server, let base, let resolution):
            return lines("\(id) conflicts; " + resolutionText(resolution),
                         ["server: " + (server.map(rowColumns) ?? "deleted the record"), "base:   " + (base.map(rowColumns) ?? "unknown")]
                            + (resolution.replacement.map { ["queued in its place: " + operationColumns($0)] } ?? []))
        case .forgotten(let kind, let ids):
            return lines("(\(ids.count) \(kind) row\(ids.count == 1 ? "" : "s") the server no longer has)", ids)
        case .checkpoint(let part):
            switch part {
            case .baseRows(let rows):
                return lines("base rows: \(rows.count)", rows.map(rowColumns))
            case .rows(let rows):
                return lines("rows: \(rows.count)", rows.map(rowColumns))
            case .outbox(let entries):
                return lines("outbox: \(entries.count) operation\(entries.count == 1 ? "" : "s")", entries.map { entry in
                    operationColumns(entry.operation) + "  " + deliveryText(entry)
                })
            case .cursors(let cursors):
                return lines("cursors: " + cursors.keys.sorted(by: utf8Order).map { "\($0) \(cursors[$0]!)" }.joined(separator: ", "), [])
            case .conflicts(let conflicts):
                return lines("conflicts: \(conflicts.count)", conflicts.flatMap { conflict in
                    [operationColumns(conflict.operation),
                     "  server: " + (conflict.server.map(rowColumns) ?? "deleted the record"),
                     "  base:   " + (conflict.baseRow.map(rowColumns) ?? "unknown"),
                     "  \(conflict.shape.rawValue) conflict, " + resolutionText(conflict.resolution)]
                })
            case .rejections(let rejections):
                return lines("rejections: \(rejections.count)", rejections.map { rejection in
                    operationColumns(rejection.operation) + "  after \(rejection.attempts) attempt\(rejection.attempts == 1 ? "" : "s"): " + quoted(rejection.reason)
                })
            case .end(let rows, let operations, let conflicts, let rejections):
                return lines("end: \(rows) rows, \(operations) operations, \(conflicts) conflicts, \(rejections) rejections", [])
            }
        }
    }

    /// `sent yes, attempts 1, last error "HTTP 503"`, with the 1.1 state when
    /// there is any: `…, permanent failures 3, quarantined, last failure permanent, last error "HTTP 422"`.
    static func deliveryText(_ entry: OutboxOperation) -> String {
        "sent \(entry.sent ? "yes" : "no"), attempts \(entry.attempts)"
            + (entry.permanentFailures > 0 ? ", permanent failures \(entry.permanentFailures)" : "")
            + (entry.quarantined ? ", quarantined" : "")
            + (entry.lastFailure.map { ", last failure \($0)" } ?? "")
            + (entry.lastError.map { ", last error " + quoted($0) } ?? "")
    }

    /// `merge-fields: requeued as <id>; lost: name, note` or `server-wins: the server's copy stands; lost: text`.
    static func resolutionText(_ resolution: ConflictResolution) -> String {
        let kept = resolution.replacement.map { "requeued as \($0.id)" } ?? "the server's copy stands"
        return "\(resolution.strategy): " + kept + (resolution.lostFields.isEmpty ? "" : "; lost: " + resolution.lostFields.joined(separator: ", "))
    }

    static func utf8Order(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    static func headerText(_ header: JournalHeader) -> String {
        let continues = header.continuesGeneration == 0 ? "-" : hex(header.continuesGeneration)
        return "format \(header.majorVersion).\(header.minorVersion), journal \(header.journalID), generation \(hex(header.generation)), "
            + "continues \(continues), first seq \(header.firstSequence), created \(timestamp(header.createdAtMilliseconds))"
    }

    static func textSummary(_ report: JournalScanReport, malformed: Int, unsupported: Int, recordsAfterDamage: Int) -> String {
        var text = ""
        let byType = report.recordsByType.sorted { $0.key < $1.key }.map { "\($0.key.name) \($0.value)" }.joined(separator: ", ")
        text += "records:  \(report.recordCount)" + (byType.isEmpty ? "" : " (\(byType))") + "\n"
        text += "bytes:    \(report.validBytes) valid of \(report.fileBytes)"
            + (report.preallocatedBytes > 0 ? ", then \(report.preallocatedBytes) preallocated (zero) bytes\n" : "\n")
        text += "status:   \(report.status)\n"
        switch report.status {
        case .clean: break
        case .tornTail(let offset, _):
            text += "note:     opening this journal for writing moves the \(report.fileBytes - offset) bytes from offset \(offset) to a side file and continues at seq \(report.nextSequence)\n"
        case .corrupt:
            text += "note:     a writer refuses this journal and leaves it untouched; `journal-salvage` copies the \(report.recordCount) valid records before the damage"
            text += recordsAfterDamage > 0 ? " (`--keep-after-damage` also keeps the \(recordsAfterDamage) valid records after it, flagged)\n" : "\n"
        case .unsupported:
            text += "note:     a newer version wrote this journal: this one only reads it (up to offset \(report.validBytes)); writers and stores refuse to append, and nothing is cut\n"
        }
        if malformed > 0 { text += "problems: \(malformed) record(s) with malformed payloads\n" }
        if unsupported > 0 { text += "problems: \(unsupported) record(s) of types this version cannot read\n" }
        return text
    }

    // MARK: JSON

    static func operationJSON(_ op: JournalOperation) -> [(String, JSONText)] {
        [
            ("op", .string(op.kind.description)),
            ("opId", .string(op.id.description)),
            ("kind", .string(op.entity)),
            ("recordId", .string(op.recordID)),
            ("baseUpdatedAt", op.baseUpdatedAt.map { .int($0) } ?? .null),
            ("queuedAt", .int(op.queuedAt)),
            ("fields", FieldSummary.json(op.fields)),
        ]
    }

    static func rowJSON(_ row: ServerRow) -> JSONText {
        .object([
            ("kind", .string(row.kind)),
            ("recordId", .string(row.id)),
            ("updatedAt", .int(row.updatedAt)),
            ("deletedAt", row.deletedAt.map { .int($0) } ?? .null),
            ("fields", FieldSummary.json(row.fields)),
        ])
    }

    static func cursorJSON(_ cursor: PullCursor) -> JSONText {
        .object([("updatedAt", .int(cursor.updatedAt)), ("id", .string(cursor.id))])
    }

    static func cursorsJSON(_ cursors: [String: PullCursor]) -> JSONText {
        .object(cursors.keys.sorted(by: utf8Order).map { ($0, cursorJSON(cursors[$0]!)) })
    }

    /// An outbox entry as a checkpoint part holds it: the operation, then `sent`, `attempts` and `lastError`.
    static func outboxJSON(_ entry: OutboxOperation) -> JSONText {
        // The 1.1 members appear only when set, so 1.0 journals dump as they always did.
        let extended: [(String, JSONText)] = entry.permanentFailures == 0 && entry.lastFailure == nil && !entry.quarantined ? [] : [
            ("permanentFailures", .int(Int64(entry.permanentFailures))),
            ("lastFailure", entry.lastFailure.map { .string($0.description) } ?? .null),
            ("quarantined", .bool(entry.quarantined)),
        ]
        return .object(operationJSON(entry.operation) + [
            ("sent", .bool(entry.sent)),
            ("attempts", .int(Int64(entry.attempts))),
            ("lastError", entry.lastError.map { .string($0) } ?? .null),
        ] + extended)
    }

    /// An outbox entry of the rebuilt state as ``LocalStore/outboxStatus()`` lists it: the operation,
    /// then `state` (`queued`, `sent` or `quarantined`), `sent`, `attempts`, `permanentFailures`,
    /// `lastFailure` and `lastError`. (`in-flight` and the next attempt time exist only in a running engine.)
    static func statusJSON(_ entry: OutboxStatusEntry) -> JSONText {
        .object(operationJSON(entry.operation) + [
            ("state", .string(entry.state.rawValue)),
            ("sent", .bool(entry.sent)),
            ("attempts", .int(Int64(entry.attempts))),
            ("permanentFailures", .int(Int64(entry.permanentFailures))),
            ("lastFailure", entry.lastFailure.map { .string($0.description) } ?? .null),
            ("lastError", entry.lastError.map { .string($0) } ?? .null),
        ])
    }

    static func conflictJSON(_ conflict: ConflictRecord) -> JSONText {
        .object([("operation", .object(operationJSON(conflict.operation))), ("server", conflict.server.map(rowJSON) ?? .null),
                 ("base", conflict.baseRow.map(rowJSON) ?? .null), ("shape", .string(conflict.shape.rawValue)),
                 ("resolution", resolutionJSON(conflict.resolution))])
    }

    static func resolutionJSON(_ resolution: ConflictResolution) -> JSONText {
        .object([("strategy", .string(resolution.strategy.description)),
                 ("replacement", resolution.replacement.map { .object(operationJSON($0)) } ?? .null),
                 ("lostFields", .array(resolution.lostFields.map { .string($0) }))])
    }

    static func rejectionJSON(_ rejection: RejectionRecord) -> JSONText {
        .object([("operation", .object(operationJSON(rejection.operation))), ("reason", .string(rejection.reason)),
                 ("attempts", .int(Int64(rejection.attempts)))])
    }

    /// The members a store event adds to its record's JSON object.
    static func eventJSON(_ event: StoreEvent) -> [(String, JSONText)] {
        switch event {
        case .edit(let op, let steps):
            return operationJSON(op) + [("compaction", .array(steps.map { step in
                switch step {
                case .remove(let id): return .object([("step", .string("remove")), ("opId", .string(id.description))])
                case .replace(let id, let merged):
                    return .object([("step", .string("replace")), ("opId", .string(id.description)), ("with", .object(operationJSON(merged)))])
                }
            }))]
        case .editBatch(let ops):
            return [("operations", .array(ops.map { .object(operationJSON($0)) }))]
        case .sent(let ids), .withdrawn(let ids):
            return [("opIds", .array(ids.map { .string($0.description) }))]
        case .acknowledged(let acks):
            return [("acknowledgements", .array(acks.map { .object([("opId", .string($0.operationID.description)), ("row", rowJSON($0.row))]) }))]
        case .failed(let id, let reason, let permanent):
            return [("opId", .string(id.description)), ("permanent", .bool(permanent)), ("reason", .string(reason))]
        case .conflicted(let id, let server):
            return [("opId", .string(id.description)), ("server", server.map(rowJSON) ?? .null)]
        case .pulled(let kind, let rows, let cursor):
            return [("kind", .string(kind)), ("cursor", cursor.map(cursorJSON) ?? .null), ("rows", .array(rows.map(rowJSON)))]
        case .attemptFailed(let id, let kind, let reason, let quarantine):
            return [("opId", .string(id.description)), ("failure", .string(kind.description)), ("quarantine", .bool(quarantine)),
                    ("reason", .string(reason))]
        case .released(let id), .discarded(let id), .conflictDismissed(let id):
            return [("opId", .string(id.description))]
        case .conflictSettled(let id, let op, let steps):
            return [("conflict", .string(id.description))] + eventJSON(.edit(op, compaction: steps))
        case .conflictResolved(let id, let server, let base, let resolution):
            return [("opId", .string(id.description)), ("server", server.map(rowJSON) ?? .null), ("base", base.map(rowJSON) ?? .null),
                    ("resolution", resolutionJSON(resolution))]
        case .forgotten(let kind, let ids):
            return [("kind", .string(kind)), ("recordIds", .array(ids.map { .string($0) }))]
        case .checkpoint(let part):
            switch part {
            case .baseRows(let rows): return [("part", .string("baseRows")), ("rows", .array(rows.map(rowJSON)))]
            case .rows(let rows): return [("part", .string("rows")), ("rows", .array(rows.map(rowJSON)))]
            case .outbox(let entries): return [("part", .string("outbox")), ("outbox", .array(entries.map(outboxJSON)))]
            case .cursors(let cursors): return [("part", .string("cursors")), ("cursors", cursorsJSON(cursors))]
            case .conflicts(let conflicts): return [("part", .string("conflicts")), ("conflicts", .array(conflicts.map(conflictJSON)))]
            case .rejections(let rejections): return [("part", .string("rejections")), ("rejections", .array(rejections.map(rejectionJSON)))]
            case .end(let rows, let operations, let conflicts, let rejections):
                return [("part", .string("end")), ("rows", .int(Int64(rows))), ("operations", .int(Int64(operations))),
                        ("conflicts", .int(Int64(conflicts))), ("rejections", .int(Int64(rejections)))]
            }
        }
    }

    static func jsonLine(_ record: JournalRecord, _ entry: JournalEntry?, _ event: StoreEvent?, _ problem: String?) -> JSONText {
        var members: [(String, JSONText)] = [
            ("offset", .int(record.offset)),
            ("length", .int(Int64(record.length))),
            ("seq", .uint(record.sequence)),
            ("type", .string(record.type.name)),
        ]
        // Format 2 only: a 1.x record carries no horizon, and its line is the one 1.x dumps always had.
        if let horizon = record.syncHorizon { members.append(("horizon", .int(horizon))) }
        if let problem { members.append(("error", .string(problem))) }
        if let event { return .object(members + eventJSON(event)) }
        switch entry {
        case .operation(let op)?: members += operationJSON(op)
        case .batch(let ops)?: members.append(("operations", .array(ops.map { .object(operationJSON($0)) })))
        case .salvaged(let offset, let sequence, let type, let payload)?:
            members += [("originalOffset", .uint(offset)), ("originalSeq", .uint(sequence)),
                        ("originalType", .string(type.name)), ("payloadBytes", .int(Int64(payload.count)))]
        case .opaque?: members.append(("payloadBytes", .int(Int64(record.payload.count))))
        case nil: break
        }
        return .object(members)
    }

    static func jsonSummary(_ report: JournalScanReport, malformed: Int, unsupported: Int, recordsAfterDamage: Int) -> JSONText {
        var summary: [(String, JSONText)] = [
            ("records", .int(Int64(report.recordCount))),
            ("validBytes", .int(report.validBytes)),
            ("fileBytes", .int(report.fileBytes)),
            ("preallocatedBytes", .int(report.preallocatedBytes)),
            ("status", .string(report.status.name)),
            ("damageOffset", report.status.damageOffset.map { .int($0) } ?? .null),
            ("damage", report.status.damage.map { .string($0.description) } ?? .null),
        ]
        // Only for an unsupported journal, so the summary of any other keeps the members it always had.
        if case .unsupported(let offset, let reason) = report.status {
            summary += [("unsupportedOffset", .int(offset)), ("unsupportedReason", .string(reason.description))]
        }
        summary += [
            ("recordsByType", .object(report.recordsByType.sorted { $0.key < $1.key }.map { ($0.key.name, .int(Int64($0.value))) })),
            ("lastSeq", report.lastSequence.map { .uint($0) } ?? .null),
            ("validRecordsAfterDamage", .int(Int64(recordsAfterDamage))),
            ("malformedRecords", .int(Int64(malformed))),
            ("unsupportedRecords", .int(Int64(unsupported))),
        ]
        if let header = report.header {
            summary.append(("header", .object([
                ("version", .string("\(header.majorVersion).\(header.minorVersion)")),
                ("journalId", .string(header.journalID.description)),
                ("generation", .string(hex(header.generation))),
                ("continuesGeneration", header.continuesGeneration == 0 ? .null : .string(hex(header.continuesGeneration))),
                ("firstSeq", .uint(header.firstSequence)),
                ("createdAt", .string(timestamp(header.createdAtMilliseconds))),
            ])))
        } else {
            summary.append(("header", .null))
        }
        return .object([("summary", .object(summary))])
    }

    // MARK: State

    /// The outbox of `state` as ``LocalStore/outboxStatus()`` lists it, with
    /// whether each entry was sent (the listing's state says `quarantined`
    /// for a quarantined one, sent or not).
    static func outboxStatus(_ state: StoreState) -> [OutboxStatusEntry] {
        state.outbox.operations.map { OutboxStatusEntry(status: OutboxEntryStatus($0, inFlight: false), sent: $0.sent) }
    }

    /// One entry of the listing, and whether it was sent.
    @dynamicMemberLookup
    struct OutboxStatusEntry {
        var status: OutboxEntryStatus
        var sent: Bool
        subscript<T>(dynamicMember path: KeyPath<OutboxEntryStatus, T>) -> T { status[keyPath: path] }
    }

    /// What the text note under the outbox says of the states a journal cannot show.
    static let outboxNote = "in-flight and the next attempt time exist only in a running engine's memory (SyncEngine.outboxStatus()); "
        + "from the journal an operation is queued, sent (it may have reached the server, so it is resent, never cancelled) or quarantined"

    /// A record as the app sees it (what ``LocalStore/records(_:)`` returns).
    struct VisibleRecord {
        var key: RecordKey
        var fields: [String: FieldValue]
        var serverUpdatedAt: Int64?
        var pending: Bool
    }

    /// The visible records of `state`, ordered by kind and id, as the store orders them.
    static func visibleRecords(_ state: StoreState) -> [VisibleRecord] {
        var keys = Set(state.snapshot.keys)
        keys.formUnion(state.outbox.keys)
        return keys.sorted().compactMap { key in
            guard let fields = state.visibleFields(of: key) else { return nil }
            return VisibleRecord(key: key, fields: fields, serverUpdatedAt: state.snapshot[key]?.updatedAt,
                                 pending: !state.outbox.operations(on: key).isEmpty)
        }
    }

    static func textState(_ result: Result<StoreState, Replayer.Failure>, records: Int) -> String {
        let state: StoreState
        switch result {
        case .failure(let failure): return "state:    cannot be rebuilt: \(failure)\n"
        case .success(let value): state = value
        }
        var text = "state:    as replay rebuilds it from \(records) record\(records == 1 ? "" : "s")\n"
        let visible = visibleRecords(state)
        if visible.isEmpty {
            text += "records:  none\n"
        } else {
            var perKind: [String: Int] = [:]
            for record in visible { perKind[record.key.kind, default: 0] += 1 }
            text += "records:  " + perKind.keys.sorted().map { "\($0) \(perKind[$0]!)" }.joined(separator: ", ") + "\n"
            text += "  " + pad("kind", 10) + pad("record", 18) + pad("server", 15) + pad("pending", 9) + "fields\n"
            for record in visible {
                text += "  " + pad(record.key.kind, 10) + pad(record.key.id, 18) + pad(record.serverUpdatedAt.map { String($0) } ?? "-", 15)
                    + pad(record.pending ? "yes" : "no", 9) + FieldSummary.text(record.fields) + "\n"
            }
        }
        let outbox = outboxStatus(state)
        if outbox.isEmpty {
            text += "outbox:   empty\n"
        } else {
            let quarantined = outbox.filter { $0.state == .quarantined }.count
            text += "outbox:   \(outbox.count) operation\(outbox.count == 1 ? "" : "s"), in the order they are sent"
                + (quarantined == 0 ? "" : "; \(quarantined) quarantined: not sent until the app retries or discards "
                    + (quarantined == 1 ? "it" : "them") + ", later operations on the same record wait behind") + "\n"
            text += "  " + pad("opId", 38) + pad("op", 7) + pad("kind", 10) + pad("record", 18) + pad("base", 15) + pad("state", 13)
                + pad("attempts", 10) + pad("permanent", 11) + pad("last failure", 22) + "last error\n"
            for entry in outbox {
                let op = entry.operation
                text += "  " + pad(op.id.description, 38) + pad(op.kind.description, 7) + pad(op.entity, 10) + pad(op.recordID, 18)
                    + pad(op.baseUpdatedAt.map { String($0) } ?? "-", 15) + pad(entry.state.rawValue, 13)
                    + pad(String(entry.attempts), 10) + pad(String(entry.permanentFailures), 11)
                    + pad(entry.lastFailure?.description ?? "-", 22) + (entry.lastError.map(quoted) ?? "-") + "\n"
            }
            text += "note:     \(outboxNote)\n"
        }
        if state.cursors.isEmpty {
            text += "cursors:  none\n"
        } else {
            text += "cursors:\n"
            for kind in state.cursors.keys.sorted(by: utf8Order) { text += "  " + pad(kind, 10) + state.cursors[kind]!.description + "\n" }
        }
        let baseRows = state.baseRows.values.sorted { $0.key < $1.key }
        if baseRows.isEmpty {
            text += "base rows: none\n"
        } else {
            text += "base rows: \(baseRows.count), the older server copies queued edits were made on (a conflict's merge base)\n"
            for row in baseRows { text += "  " + pad("", 38) + rowColumns(row) + "\n" }
        }
        if state.conflicts.isEmpty {
            text += "conflicts: none\n"
        } else {
            text += "conflicts: \(state.conflicts.count), each resolved by its kind's policy and kept until the app dismisses it\n"
            for conflict in state.conflicts {
                text += "  " + pad(conflict.operation.id.description, 38) + operationColumns(conflict.operation) + "\n"
                text += "  " + pad("", 38) + "server: " + (conflict.server.map(rowColumns) ?? "deleted the record") + "\n"
                text += "  " + pad("", 38) + "base:   " + (conflict.baseRow.map(rowColumns) ?? "unknown") + "\n"
                text += "  " + pad("", 38) + "\(conflict.shape.rawValue) conflict, " + resolutionText(conflict.resolution) + "\n"
                if let replacement = conflict.resolution.replacement {
                    text += "  " + pad("", 38) + "queued in its place: " + operationColumns(replacement) + "\n"
                }
            }
        }
        if state.rejections.isEmpty {
            text += "rejections: none\n"
        } else {
            text += "rejections: \(state.rejections.count)\n"
            for rejection in state.rejections {
                text += "  " + pad(rejection.operation.id.description, 38) + operationColumns(rejection.operation) + "\n"
                text += "  " + pad("", 38) + "after \(rejection.attempts) attempt\(rejection.attempts == 1 ? "" : "s"): " + quoted(rejection.reason) + "\n"
            }
        }
        return text
    }

    /// `{"state": {"records": …, "outbox": […], "cursors": …, "baseRows": […], "conflicts": […], "rejections": […]}}`, or
    /// `{"state": null, "stateError": "…"}` when replay cannot rebuild one. Each outbox entry is
    /// listed as the app lists it (``statusJSON(_:)``); each conflict with its shape and resolution.
    static func jsonState(_ result: Result<StoreState, Replayer.Failure>) -> JSONText {
        let state: StoreState
        switch result {
        case .failure(let failure): return .object([("state", .null), ("stateError", .string(failure.description))])
        case .success(let value): state = value
        }
        var kinds: [(String, [JSONText])] = []
        for record in visibleRecords(state) {
            let json = JSONText.object([
                ("recordId", .string(record.key.id)),
                ("serverUpdatedAt", record.serverUpdatedAt.map { .int($0) } ?? .null),
                ("pending", .bool(record.pending)),
                ("fields", FieldSummary.json(record.fields)),
            ])
            if kinds.last?.0 == record.key.kind { kinds[kinds.count - 1].1.append(json) } else { kinds.append((record.key.kind, [json])) }
        }
        return .object([("state", .object([
            ("records", .object(kinds.map { ($0.0, .array($0.1)) })),
            ("outbox", .array(outboxStatus(state).map(statusJSON))),
            ("cursors", cursorsJSON(state.cursors)),
            ("baseRows", .array(state.baseRows.values.sorted { $0.key < $1.key }.map(rowJSON))),
            ("conflicts", .array(state.conflicts.map(conflictJSON))),
            ("rejections", .array(state.rejections.map(rejectionJSON))),
        ]))])
    }

    // MARK: Formatting

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// ISO 8601 in UTC with milliseconds, independent of the machine's time zone.
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
