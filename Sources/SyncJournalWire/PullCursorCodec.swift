import SyncJournalProtocol

/// The wire form of a ``PullCursor``: the string `UPDATEDAT:ID`, the stamp
/// in decimal (no `+`, no leading zeros) and the id everything after the
/// first colon (1 to 64 bytes).
///
/// ```swift
/// PullCursorCodec.encode(PullCursor(updatedAt: 1764000000123, id: "p1"))      // "1764000000123:p1"
/// let cursor = try PullCursorCodec.decode("1764000000123:a:b", at: "$.cursors.pin")   // id "a:b"
/// ```
public enum PullCursorCodec {
    /// The cursor's string.
    public static func encode(_ cursor: PullCursor) -> String { "\(cursor.updatedAt):\(cursor.id)" }

    /// The cursor `text` (found at `path`) stands for.
    ///
    /// - Throws: ``WireError/badCursor(path:text:)``.
    public static func decode(_ text: String, at path: String) throws(WireError) -> PullCursor {
        let utf8 = Array(text.utf8)
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { throw .badCursor(path: path, text: text) }
        let stamp = utf8[..<colon]
        let id = utf8[(colon + 1)...]
        guard !id.isEmpty, id.count <= ProtocolLimits.maximumRecordIDBytes, let updatedAt = parseStamp(stamp) else {
            throw .badCursor(path: path, text: text)
        }
        return PullCursor(updatedAt: updatedAt, id: String(decoding: id, as: UTF8.self))
    }

    private static func parseStamp(_ digits: ArraySlice<UInt8>) -> Int64? {
        var rest = digits
        let negative = rest.first == UInt8(ascii: "-")
        if negative { rest = rest.dropFirst() }
        guard let first = rest.first, rest.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        if first == UInt8(ascii: "0") && (rest.count > 1 || negative) { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}
