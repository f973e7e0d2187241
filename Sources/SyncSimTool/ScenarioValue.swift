import SyncJournalProtocol
import SyncJournalStore

/// How a scenario file writes a field value, and how the simulator prints one.
///
/// In a scenario, a field is `name=value` with no spaces around `=`. The value is:
///
/// | written as | value |
/// |---|---|
/// | `"text"` (escapes `\"`, `\\`, `\n`, `\t`) | a string, always (so `"42"` is a string) |
/// | `true`, `false` | a boolean |
/// | `null` | no value |
/// | `-12`, `42` (an optional `-` and decimal digits, fits in 64 bits) | an integer |
/// | `42.5`, `-0.25`, `1e3` (has a `.` or an exponent, parses as a finite double) | a double |
/// | `{a,b,"c d"}` (elements bare or quoted, `{}` empty) | a set of strings |
/// | any other bare word, say `Cafe` | a string |
///
/// ```swift
/// let value = try ScenarioValue.parse("42.5")    // .double(42.5)
/// ScenarioValue.format(.stringSet(["b", "a"]))   // "{a,b}"
/// ```
public enum ScenarioValue {
    /// Why a value could not be read.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, for people.
        public var description: String
    }

    /// Parses one value as written after `name=`.
    public static func parse(_ raw: String) throws(Problem) -> FieldValue {
        if raw.isEmpty { throw Problem(description: "missing value") }
        if raw.first == "\"" {
            guard let (text, rest) = try readQuoted(Substring(raw)), rest.isEmpty else {
                throw Problem(description: "a quoted value must be one whole \"string\", saw \(raw)")
            }
            return .string(text)
        }
        if raw.first == "{" {
            guard raw.last == "}", raw.count >= 2 else { throw Problem(description: "a set must end with }, saw \(raw)") }
            let inner = raw.dropFirst().dropLast()
            var elements = Set<String>()
            for part in try splitElements(inner) {
                let trimmed = part.trimmingSpaces()
                if trimmed.isEmpty { throw Problem(description: "empty element in set \(raw)") }
                if trimmed.first == "\"" {
                    guard let (text, rest) = try readQuoted(trimmed), rest.isEmpty else {
                        throw Problem(description: "bad quoted element in set \(raw)")
                    }
                    elements.insert(text)
                } else {
                    elements.insert(String(trimmed))
                }
            }
            return .stringSet(elements)
        }
        switch raw {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null": return .null
        default: break
        }
        if isInteger(raw) {
            guard let value = Int64(raw) else { throw Problem(description: "integer out of range: \(raw)") }
            return .int(value)
        }
        if looksNumeric(raw), let value = Double(raw), value.isFinite { return .double(value) }
        if raw.contains("\"") { throw Problem(description: "a quote inside a bare word: \(raw)") }
        return .string(raw)
    }

    /// The value as a scenario file writes it (sets sorted, so output is stable).
    public static func format(_ value: FieldValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let text): return quote(text)
        case .bytes(let bytes): return "bytes(\(bytes.count))"
        case .stringSet(let set):
            return "{" + set.sorted().map { isPlainWord($0) ? $0 : quote($0) }.joined(separator: ",") + "}"
        case .timestamp(let microseconds): return "timestamp(\(microseconds))"
        case .uuid(let value): return "uuid(\(value.uuidString.lowercased()))"
        case .array(let elements): return "[" + elements.map { format($0) }.joined(separator: ",") + "]"
        case .object(let members): return "(" + members.keys.sorted().map { "\($0)=\(format(members[$0]!))" }.joined(separator: ",") + ")"
        case .attachment(let attachment): return "attachment(\(attachment.content.hex.prefix(12)),\(attachment.size))"
        }
    }

    /// Fields as `name=value` pairs, sorted by name: `{}` when there are none.
    public static func format(_ fields: [String: FieldValue]) -> String {
        if fields.isEmpty { return "{}" }
        return fields.keys.sorted().map { "\($0)=\(format(fields[$0]!))" }.joined(separator: " ")
    }

    /// `text` in double quotes, with `"`, `\`, newlines and tabs escaped.
    public static func quote(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// Reads a quoted string at the start of `text`; returns it and what follows, or nil if `text` does not start with a quote.
    static func readQuoted(_ text: Substring) throws(Problem) -> (String, Substring)? {
        guard text.first == "\"" else { return nil }
        var out = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" { return (out, text[text.index(after: index)...]) }
            if character == "\\" {
                let next = text.index(after: index)
                guard next < text.endIndex else { break }
                switch text[next] {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "\"": out.append("\"")
                case "\\": out.append("\\")
                default: throw Problem(description: "unknown escape \\\(text[next])")
                }
                index = text.index(after: next)
                continue
            }
            out.append(character)
            index = text.index(after: index)
        }
        throw Problem(description: "unterminated string")
    }

    private static func splitElements(_ inner: Substring) throws(Problem) -> [Substring] {
        if inner.trimmingSpaces().isEmpty { return [] }
        var parts: [Substring] = []
        var start = inner.startIndex
        var index = inner.startIndex
        var quoted = false
        while index < inner.endIndex {
            let character = inner[index]
            if quoted && character == "\\" {
                index = inner.index(after: index)
                if index < inner.endIndex { index = inner.index(after: index) }
                continue
            }
            if character == "\"" { quoted.toggle() }
            if character == "," && !quoted {
                parts.append(inner[start..<index])
                start = inner.index(after: index)
            }
            index = inner.index(after: index)
        }
        if quoted { throw Problem(description: "unterminated string in set") }
        parts.append(inner[start..<inner.endIndex])
        return parts
    }

    private static func isInteger(_ raw: String) -> Bool {
        let digits = raw.first == "-" ? raw.dropFirst() : Substring(raw)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func looksNumeric(_ raw: String) -> Bool {
        raw.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) } && raw.contains(where: \.isNumber)
    }

    private static func isPlainWord(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
            && (try? parse(text)) == .string(text)
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
