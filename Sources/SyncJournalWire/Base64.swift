/// RFC 4648 base64 with padding, strict: no whitespace, no line breaks, and
/// the unused bits of the last character must be zero, so each byte string
/// has exactly one encoding.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(remaining > 1 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            out.append(remaining > 2 ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or why it is not strict base64.
    static func decode(_ text: String) -> Result<[UInt8], Failure> {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return .failure(.length(chars.count)) }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            let isLast = index + 4 == chars.count
            var values: [UInt32] = []
            var padding = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                if char == UInt8(ascii: "=") {
                    // Padding only at the end of the last group, in its last one or two places.
                    guard isLast, offset >= 2 else { return .failure(.character(at: index + offset)) }
                    padding += 1
                    continue
                }
                guard padding == 0, let value = sextet(char) else { return .failure(.character(at: index + offset)) }
                values.append(value)
            }
            let group = values.enumerated().reduce(UInt32(0)) { $0 | $1.element << UInt32(18 - 6 * $1.offset) }
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
            let unusedMask: UInt32 = padding == 2 ? 0xFFFF : (padding == 1 ? 0xFF : 0)
            if group & unusedMask != 0 { return .failure(.nonZeroPadBits) }
            index += 4
        }
        return .success(out)
    }

    private static func sextet(_ char: UInt8) -> UInt32? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(char - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(char - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(char - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case length(Int)
        case character(at: Int)
        case nonZeroPadBits

        var description: String {
            switch self {
            case .length(let count): return "base64 of \(count) characters (not a multiple of 4)"
            case .character(let at): return "not base64 at character \(at)"
            case .nonZeroPadBits: return "base64 with non-zero unused bits"
            }
        }
    }
}
