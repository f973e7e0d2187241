extension ServerRow {
    /// About how many bytes this row takes in a pull reply's JSON: names,
    /// ids and values at their unescaped length, numbers at their longest.
    /// A page is cut by this estimate; escaping can make the real reply
    /// larger, which ``ProtocolLimits/pullPageByteBudget`` leaves room for.
    package var approximateWireBytes: Int {
        var bytes = 96 + kind.utf8.count + id.utf8.count
        for (name, value) in fields { bytes += name.utf8.count + 4 + value.approximateWireBytes }
        return bytes
    }
}

extension FieldValue {
    /// About how many bytes this value takes in the wire's JSON.
    package var approximateWireBytes: Int {
        switch self {
        case .null, .bool: return 5
        case .int, .double: return 24
        case .timestamp: return 36
        case .uuid: return 48
        case .string(let text): return text.utf8.count + 2
        case .bytes(let bytes): return (bytes.count + 2) / 3 * 4 + 14
        case .stringSet(let members): return members.reduce(12) { $0 + $1.utf8.count + 3 }
        case .array(let elements): return elements.reduce(14) { $0 + $1.approximateWireBytes + 1 }
        case .object(let members): return members.reduce(15) { $0 + $1.key.utf8.count + 4 + $1.value.approximateWireBytes }
        case .attachment(let attachment): return 130 + attachment.mediaType.utf8.count
        }
    }
}
