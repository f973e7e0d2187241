/// The recursive-descent state of one ``JSONParser/parse(_:)`` call, or of
/// one message decoded straight from its bytes (the extensions in
/// `JSONScanner+Validation.swift` and `JSONScanner+FieldValues.swift`).
struct JSONScanner {
    let bytes: [UInt8]
    var position = 0
    let maximumDepth: Int

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(WireError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if position < bytes.count { throw .syntax(reason: "characters after the value", offset: position) }
        return value
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() throws(WireError) -> UInt8 {
        guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
        return bytes[position]
    }

    mutating func parseValue(depth: Int) throws(WireError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw .syntax(reason: "not the start of a value", offset: position)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(WireError) {
        let start = position
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
            guard bytes[position] == byte else { throw .syntax(reason: "not a literal", offset: start) }
            position += 1
        }
    }

    mutating func enter(depth: Int) throws(WireError) {
        if depth > maximumDepth { throw .tooDeep(limit: maximumDepth, offset: position) }
        position += 1
    }

    private mutating func parseArray(depth: Int) throws(WireError) -> JSONValue {
        try enter(depth: depth)
        var items: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(items)
            default: throw .syntax(reason: "expected , or ] in an array", offset: position)
            }
        }
    }

    private mutating func parseObject(depth: Int) throws(WireError) -> JSONValue {
        try enter(depth: depth)
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let nameAt = position
            guard try peek() == UInt8(ascii: "\"") else { throw .syntax(reason: "expected a member name", offset: position) }
            let name = try parseString()
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw .syntax(reason: "expected : after a member name", offset: position) }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: name) != nil { throw .duplicateMember(name: name, offset: nameAt) }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw .syntax(reason: "expected , or } in an object", offset: position)
            }
        }
    }

    // MARK: Strings

    mutating func parseString() throws(WireError) -> String {
        position += 1   // the opening quote
        let start = position
        // Fast path: no escapes, so the string is the bytes as they stand.
        while true {
            let byte = try peek()
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[start..<position], as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            try advanceCharacter()
        }
        var buffer = Array(bytes[start..<position])
        while true {
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            default:
                let characterStart = position
                try advanceCharacter()
                buffer.append(contentsOf: bytes[characterStart..<position])
            }
        }
    }

    /// Steps over one unescaped character, checking it is valid UTF-8 and not a control character.
    mutating func advanceCharacter() throws(WireError) {
        let start = position
        let lead = bytes[position]
        if lead < 0x20 { throw .syntax(reason: "a control character in a string", offset: position) }
        if lead < 0x80 {
            position += 1
            return
        }
        // RFC 3629's table: the ranges of the second byte rule out over-long
        // forms, encoded surrogates and values past U+10FFFF.
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw .invalidUTF8(offset: start)
        }
        for index in 1..<length {
            guard start + index < bytes.count else { throw .unexpectedEnd(offset: bytes.count) }
            let byte = bytes[start + index]
            let range = index == 1 ? secondRange : 0x80...0xBF
            guard range.contains(byte) else { throw .invalidUTF8(offset: start) }
        }
        position = start + length
    }

    mutating func parseEscape(into buffer: inout [UInt8]) throws(WireError) {
        let start = position
        position += 1
        let byte = try peek()
        position += 1
        switch byte {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalarValue = UInt32(unit)
            if (0xDC00...0xDFFF).contains(unit) { throw .loneSurrogate(offset: start) }
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed at once by an escaped low one.
                guard try peek() == UInt8(ascii: "\\") else { throw .loneSurrogate(offset: start) }
                guard position + 1 < bytes.count else { throw .unexpectedEnd(offset: bytes.count) }
                guard bytes[position + 1] == UInt8(ascii: "u") else { throw .loneSurrogate(offset: start) }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(offset: start) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw .loneSurrogate(offset: start) }
            buffer.append(contentsOf: scalar.utf8)
        default:
            throw .syntax(reason: "an unknown escape", offset: start)
        }
    }

    private mutating func parseHex4() throws(WireError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = try peek()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .syntax(reason: "a \\u escape needs four hex digits", offset: position)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    // MARK: Numbers

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func parseNumber() throws(WireError) -> JSONValue {
        let start = position
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let integerStart = position
        guard isDigit(try peek()) else { throw .syntax(reason: "a minus sign without digits", offset: position) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw .syntax(reason: "a leading zero", offset: integerStart) }
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        let integerEnd = position
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard isDigit(try peek()) else { throw .syntax(reason: "a fraction without digits", offset: position) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if try peek() == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard isDigit(try peek()) else { throw .syntax(reason: "an exponent without digits", offset: position) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if isInteger {
            // Accumulate the magnitude in UInt64: Int64.min's is one more than Int64.max.
            var magnitude: UInt64 = 0
            for byte in bytes[integerStart..<integerEnd] {
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if overflow1 || overflow2 { throw .integerOutOfRange(offset: start) }
                magnitude = sum
            }
            if negative {
                if magnitude > UInt64(Int64.max) + 1 { throw .integerOutOfRange(offset: start) }
                return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
            }
            if magnitude > UInt64(Int64.max) { throw .integerOutOfRange(offset: start) }
            return .integer(Int64(magnitude))
        }
        // The grammar is checked above, so the standard library's correctly
        // rounded conversion sees only JSON's subset of its syntax.
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .numberOutOfRange(offset: start) }
        return .number(value)
    }
}
