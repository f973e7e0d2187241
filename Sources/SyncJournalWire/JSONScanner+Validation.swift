extension JSONScanner {
    /// Checks the whole document by every rule of ``parseDocument()`` (the
    /// grammar, UTF-8, nesting, repeated member names, numbers within
    /// range, nothing after the value) and throws the same error at the
    /// same offset, but builds no value; the position is back at the start.
    ///
    /// A message decoded straight from its bytes is checked first, so a
    /// body that is not JSON fails as it would through ``JSONParser``, and
    /// the decoding that follows meets only well-formed bytes.
    mutating func validateDocument() throws(WireError) {
        skipWhitespace()
        try validateValue(depth: 0)
        skipWhitespace()
        if position < bytes.count { throw .syntax(reason: "characters after the value", offset: position) }
        position = 0
    }

    private mutating func validateValue(depth: Int) throws(WireError) {
        switch try peek() {
        case UInt8(ascii: "{"): try validateObject(depth: depth + 1)
        case UInt8(ascii: "["): try validateArray(depth: depth + 1)
        case UInt8(ascii: "\""): try validateString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw .syntax(reason: "not the start of a value", offset: position)
        }
    }

    private mutating func validateArray(depth: Int) throws(WireError) {
        try enter(depth: depth)
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            try validateValue(depth: depth)
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return
            default: throw .syntax(reason: "expected , or ] in an array", offset: position)
            }
        }
    }

    private mutating func validateObject(depth: Int) throws(WireError) {
        try enter(depth: depth)
        // Names are compared as strings, as the parser's dictionary does
        // (canonically equivalent spellings are one name).
        var names = Set<String>()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return
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
            try validateValue(depth: depth)
            if !names.insert(name).inserted { throw .duplicateMember(name: name, offset: nameAt) }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return
            default: throw .syntax(reason: "expected , or } in an object", offset: position)
            }
        }
    }

    /// Checks a string without making it: a long string value costs no copy.
    private mutating func validateString() throws(WireError) {
        position += 1   // the opening quote
        var escaped: [UInt8] = []
        while true {
            let byte = try peek()
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte == UInt8(ascii: "\\") {
                try parseEscape(into: &escaped)
                escaped.removeAll(keepingCapacity: true)
            } else {
                try advanceCharacter()
            }
        }
    }

    // MARK: Moving over checked bytes

    /// Moves past the value at the position in a document
    /// ``validateDocument()`` has checked, and returns how many elements (an
    /// array) or members (an object) it holds, 0 for any other value. Only
    /// brackets, quotes and separators are looked at, so an array can be
    /// counted before it is built, and built at its final size.
    mutating func skipCheckedValue() -> Int {
        switch bytes[position] {
        case UInt8(ascii: "\""):
            skipCheckedString()
            return 0
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var separators = 0
            var empty = true
            repeat {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    empty = false
                    skipCheckedString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if depth == 1 { empty = false }
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 1 { separators += 1 }
                case 0x20, 0x09, 0x0A, 0x0D:
                    break
                default:
                    if depth == 1 { empty = false }
                }
                position += 1
            } while depth > 0
            return empty ? 0 : separators + 1
        default:
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D: return 0
                default: position += 1
                }
            }
            return 0
        }
    }

    /// Moves past a checked string, its closing quote included.
    private mutating func skipCheckedString() {
        position += 1
        while true {
            switch bytes[position] {
            case UInt8(ascii: "\\"): position += 2
            case UInt8(ascii: "\""): position += 1; return
            default: position += 1
            }
        }
    }
}
