import Foundation
import SyncJournalProtocol
import SyncJournalStore
import SyncJournalCommandLine

/// Renders field values for people (`journal-dump` text) and for machines (JSON).
enum FieldSummary {
    /// `name="Cafe", rating=5, tags={a,b}`, cut to `limit` characters.
    static func text(_ fields: [String: FieldValue], limit: Int = 72) -> String {
        if fields.isEmpty { return "-" }
        let names = fields.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let joined = names.map { "\($0)=\(text(fields[$0]!))" }.joined(separator: ", ")
        if joined.count <= limit { return joined }
        return String(joined.prefix(limit - 1)) + "…"
    }

    static func text(_ value: FieldValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return "\(d)"
        case .string(let s): return JSONText.string(s).serialized
        case .bytes(let b): return "<\(b.count) bytes>"
        case .stringSet(let set): return "{" + set.sorted().joined(separator: ",") + "}"
        case .timestamp(let microseconds): return Self.iso8601(microseconds: microseconds)
        case .uuid(let value): return value.uuidString.lowercased()
        case .array(let elements): return "[" + elements.map { text($0) }.joined(separator: ",") + "]"
        case .object(let members):
            let names = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            return "(" + names.map { "\($0)=\(text(members[$0]!))" }.joined(separator: ",") + ")"
        case .attachment(let attachment):
            return "<\(attachment.mediaType) \(attachment.size) bytes sha256:\(attachment.content.hex.prefix(12))…>"
        }
    }

    static func json(_ fields: [String: FieldValue]) -> JSONText {
        let names = fields.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return .object(names.map { ($0, json(fields[$0]!)) })
    }

    /// Scalars map to JSON scalars; bytes and sets, which JSON lacks, are tagged objects.
    static func json(_ value: FieldValue) -> JSONText {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .bytes(let b): return .object([("bytes", .string(Data(b).base64EncodedString()))])
        case .stringSet(let set): return .object([("set", .array(set.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { .string($0) }))])
        case .timestamp(let microseconds): return .object([("timestamp", .int(microseconds))])
        case .uuid(let value): return .object([("uuid", .string(value.uuidString.lowercased()))])
        case .array(let elements): return .object([("array", .array(elements.map { json($0) }))])
        case .object(let members): return .object([("object", json(members))])
        case .attachment(let attachment):
            return .object([("attachment", .object([("sha256", .string(attachment.content.hex)), ("size", .int(attachment.size)),
                                                    ("type", .string(attachment.mediaType))]))])
        }
    }

    /// `2025-11-24T16:00:00.000001Z`: a timestamp in UTC with its
    /// microseconds, in the proleptic Gregorian calendar, for people.
    static func iso8601(microseconds: Int64) -> String { CivilTime.iso8601(microseconds: microseconds) }
}
