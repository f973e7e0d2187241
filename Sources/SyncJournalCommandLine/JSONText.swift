/// A JSON value with object keys kept in the order they were added, so tool
/// output is stable and diffable.
package indirect enum JSONText: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A signed integer.
    case int(Int64)
    /// An unsigned integer (sequence numbers).
    case uint(UInt64)
    /// A number; non-finite values become the strings `NaN`, `Infinity`, `-Infinity`.
    case double(Double)
    /// A string, escaped as JSON requires.
    case string(String)
    /// An array.
    case array([JSONText])
    /// An object whose members keep their order.
    case object([(String, JSONText)])

    /// The compact serialization (no spaces), one line.
    package var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .uint(let value): out += String(value)
        case .double(let value):
            if value.isFinite {
                var text = "\(value)"
                if !text.contains(".") && !text.contains("e") { text += ".0" }
                out += text
            } else {
                // JSON has no NaN or infinity: say what it is as a string.
                JSONText.string(value.isNaN ? "NaN" : (value > 0 ? "Infinity" : "-Infinity")).write(to: &out)
            }
        case .string(let value):
            out += "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            out += "\""
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                JSONText.string(member.0).write(to: &out)
                out += ":"
                member.1.write(to: &out)
            }
            out += "}"
        }
    }

    /// Equal when they serialize the same.
    package static func == (lhs: JSONText, rhs: JSONText) -> Bool { lhs.serialized == rhs.serialized }
    /// Hashes the serialization.
    package func hash(into hasher: inout Hasher) { hasher.combine(serialized) }
}
