import Foundation
import SyncJournalCore
import SyncJournalStore

/// `journal-dump [--json] [--verify] PATH`: shows any journal, healthy or
/// damaged, without changing it.
///
/// Exit status: 0 clean, 1 damage found, 64 usage error, 65 not a journal
/// (bad magic or unknown major version), 66 the file cannot be opened.
public struct JournalDumpCommand: Sendable {
    /// Parsed command-line options.
    public struct Options: Sendable, Hashable {
        /// JSON Lines instead of text.
        public var json = false
        /// Print only the summary.
        public var verifyOnly = false
        /// The journal to read.
        public var path: String
    }

    /// The usage text.
    public static let usage = """
        usage: journal-dump [--json] [--verify] PATH
          --json    one JSON object per record, then a {"summary": …} line
          --verify  print only the summary
        exit status: 0 clean, 1 damage found, 64 usage error, 65 not a journal, 66 cannot open

        """

    /// Parses arguments (without the program name).
    public static func parse(_ arguments: [String]) -> Options? {
        var json = false
        var verify = false
        var path: String?
        for argument in arguments {
            switch argument {
            case "--json": json = true
            case "--verify": verify = true
            default:
                if argument.hasPrefix("-") && argument != "-" { return nil }
                if path != nil { return nil }
                path = argument
            }
        }
        guard let path else { return nil }
        return Options(json: json, verifyOnly: verify, path: path)
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
        let reader = JournalReader(path: options.path)
        var malformed = 0
        var unsupported = 0
        var headerPrinted = false
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
                    output.standard(tableHeading)
                }
                let entry: JournalEntry?
                var problem: String?
                do throws(JournalEntry.DecodeError) {
                    entry = try JournalEntry.decode(record)
                } catch {
                    entry = nil
                    problem = error.description
                    if case .unsupportedType = error { unsupported += 1 } else { malformed += 1 }
                }
                guard !options.verifyOnly else { return }
                if options.json {
                    output.standard(jsonLine(record, entry, problem).serialized + "\n")
                } else {
                    output.standard(textLines(record, entry, problem))
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
        if report.status != .clean || malformed > 0 || unsupported > 0 { return .damage }
        return .ok
    }

    // MARK: Text

    static let tableHeading = pad("offset", 9, right: true) + "  " + pad("seq", 6, right: true) + "  "
        + pad("type", 10) + pad("op", 7) + pad("kind", 10) + pad("record", 18) + pad("base", 15) + "fields\n"

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        if text.count >= width { return right ? text : text + " " }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }

    static func textLines(_ record: JournalRecord, _ entry: JournalEntry?, _ problem: String?) -> String {
        let prefix = pad(String(record.offset), 9, right: true) + "  " + pad(String(record.sequence), 6, right: true) + "  "
            + pad(record.type.name, 10)
        func operationColumns(_ op: JournalOperation) -> String {
            pad(op.kind.description, 7) + pad(op.entity, 10) + pad(op.recordID, 18)
                + pad(op.baseUpdatedAt.map { String($0) } ?? "-", 15) + FieldSummary.text(op.fields)
        }
        if let problem { return prefix + "!! " + problem + "\n" }
        switch entry {
        case .operation(let op)?:
            return prefix + operationColumns(op) + "\n"
        case .batch(let ops)?:
            var lines = prefix + "(\(ops.count) operations)\n"
            for op in ops { lines += pad("", 9) + "  " + pad("", 6) + "  " + pad("  ·", 10) + operationColumns(op) + "\n" }
            return lines
        case .salvaged(let offset, let sequence, let type, let payload)?:
            return prefix + "copied from offset \(offset), seq \(sequence), type \(type.name), \(payload.count) bytes\n"
        case .opaque(let type)?:
            return prefix + "(\(record.payload.count) payload bytes, type \(type) not shown)\n"
        case nil:
            return prefix + "\n"
        }
    }

    static func headerText(_ header: JournalHeader) -> String {
        let continues = header.continuesGeneration == 0 ? "-" : hex(header.continuesGeneration)
        return "format \(header.majorVersion).\(header.minorVersion), journal \(header.journalID), generation \(hex(header.generation)), "
            + "continues \(continues), first seq \(header.firstSequence), created \(timestamp(header.createdAtMilliseconds))"
    }

    static func textSummary(_ report: JournalScanReport, malformed: Int, unsupported: Int, recordsAfterDamage: Int) -> String {
        var text = ""
        let byType = report.recordsByType.sorted { $0.key < $1.key }.map { "\($0.key.name) \($0.value)" }.joined(separator: ", ")
        text += "records:  \(report.recordCount)" + (byType.isEmpty ? "" : " (\(byType))") + "\n"
        text += "bytes:    \(report.validBytes) valid of \(report.fileBytes)\n"
        text += "status:   \(report.status)\n"
        switch report.status {
        case .clean: break
        case .tornTail(let offset, _):
            text += "note:     opening this journal for writing moves the \(report.fileBytes - offset) bytes from offset \(offset) to a side file and continues at seq \(report.nextSequence)\n"
        case .corrupt:
            text += "note:     a writer refuses this journal and leaves it untouched; `journal-salvage` copies the \(report.recordCount) valid records before the damage"
            text += recordsAfterDamage > 0 ? " (`--keep-after-damage` also keeps the \(recordsAfterDamage) valid records after it, flagged)\n" : "\n"
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

    static func jsonLine(_ record: JournalRecord, _ entry: JournalEntry?, _ problem: String?) -> JSONText {
        var members: [(String, JSONText)] = [
            ("offset", .int(record.offset)),
            ("length", .int(Int64(record.length))),
            ("seq", .uint(record.sequence)),
            ("type", .string(record.type.name)),
        ]
        if let problem { members.append(("error", .string(problem))) }
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
            ("status", .string(report.status.name)),
            ("damageOffset", report.status.damageOffset.map { .int($0) } ?? .null),
            ("damage", report.status.damage.map { .string($0.description) } ?? .null),
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
