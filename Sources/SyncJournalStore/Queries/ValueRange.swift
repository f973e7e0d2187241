import SyncJournalProtocol

/// A range of field values in the query order, as an index answers it:
/// open at either end when its bound is `nil`. With a `prefix`, only strings
/// starting with it (they lie together, from the prefix itself upwards).
package struct ValueRange: Sendable, Hashable {
    package var lower: FieldValue?
    package var lowerInclusive: Bool
    package var upper: FieldValue?
    package var upperInclusive: Bool
    package var prefix: String?

    package init(lower: FieldValue?, lowerInclusive: Bool, upper: FieldValue?, upperInclusive: Bool, prefix: String? = nil) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
        self.prefix = prefix
    }

    /// Whether `value` lies above the lower bound.
    package func isAboveLower(_ value: FieldValue) -> Bool {
        guard let lower else { return true }
        let order = value.queryOrder(lower)
        return lowerInclusive ? order >= 0 : order > 0
    }

    /// Whether `value` lies below the upper bound (and, with a prefix, starts with it).
    package func isBelowUpper(_ value: FieldValue) -> Bool {
        if let prefix {
            guard case .string(let text) = value else { return false }
            return text.unicodeScalars.starts(with: prefix.unicodeScalars)
        }
        guard let upper else { return true }
        let order = value.queryOrder(upper)
        return upperInclusive ? order <= 0 : order < 0
    }
}
