extension PullCursor {
    /// Parses the wire form `updatedAt:id` (the id may contain colons; the
    /// stamp is a decimal integer). `nil` when malformed.
    ///
    /// ```swift
    /// let cursor = PullCursor(wire: "1764000000123:p1")   // updatedAt 1764000000123, id "p1"
    /// ```
    package init?(wire: String) {
        guard let colon = wire.firstIndex(of: ":") else { return nil }
        let stamp = wire[..<colon]
        let id = String(wire[wire.index(after: colon)...])
        guard !stamp.isEmpty, stamp.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }),
              let updatedAt = Int64(stamp), !id.isEmpty, id.utf8.count <= ProtocolLimits.maximumRecordIDBytes else { return nil }
        self.init(updatedAt: updatedAt, id: id)
    }

    /// The wire form `updatedAt:id` (the same as ``description``).
    package var wire: String { description }
}
