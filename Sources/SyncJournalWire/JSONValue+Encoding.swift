extension JSONValue {
    /// The compact UTF-8 encoding: no whitespace, members sorted by the UTF-8
    /// bytes of their names, doubles always with a fraction or an exponent
    /// (`1.0`, `1e+300`) and in their shortest exact form, so they parse back
    /// to the same bits.
    ///
    /// ```swift
    /// JSONValue.object(["b": .number(1), "a": .integer(1)]).encoded()   // {"a":1,"b":1.0}
    /// ```
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out)
        return out
    }

    /// The encoding as a string.
    public var encodedText: String { String(decoding: encoded(), as: UTF8.self) }

    /// Appends the compact encoding to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): Self.writeInteger(value, to: &out)
        case .number(let value): Self.writeNumber(value, to: &out)
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends an integer's decimal digits (what `String(value)` spells)
    /// without making a string: replies can hold millions of them.
    static func writeInteger<Sink: ByteSink>(_ value: Int64, to out: inout Sink) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    static func writeNumber<Sink: ByteSink>(_ value: Double, to out: inout Sink) {
        guard value.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        // Swift's description is the shortest text that parses back to the
        // same bits; it drops the fraction only for exponent forms.
        let text = value.description
        out.append(contentsOf: text.utf8)
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            out.append(contentsOf: ".0".utf8)
        }
    }

    static func writeString<Sink: ByteSink>(_ value: String, to out: inout Sink) {
        writeString(utf8: value.utf8, to: &out)
    }

    /// Appends a string given as its UTF-8 bytes (a stored field's, which
    /// are never made into a `String` on their way to a reply).
    static func writeString<Sink: ByteSink>(utf8 value: some Collection<UInt8>, to out: inout Sink) {
        out.append(UInt8(ascii: "\""))
        for byte in value {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
