import SyncJournalProtocol

// The one order queries compare and sort field values by (documented in
// QueriesAndObservation.md): first by the value's rank, then within a rank.
//
//   null < bool < numbers < string < bytes < string set < timestamp < uuid
//        < array < object < attachment
//
// - false < true;
// - integers and doubles are one rank, compared by numeric value (an integer
//   and a double that are numerically equal compare equal); NaN lies below
//   every other number;
// - strings by their Unicode scalars, bytes lexicographically, sets by their
//   members sorted then compared in turn;
// - timestamps by time, UUIDs by their 16 bytes;
// - arrays element by element in this order, a shorter prefix first; objects
//   by their member names sorted, comparing name then value in turn;
// - attachments by size, then content hash, then media type.
//
// A new case of FieldValue takes a rank of its own (one arm in `queryRank`)
// and one arm in `compareWithinRank`; a value compared only for equality
// there answers `.same` or orders by a stable encoding.
extension FieldValue {
    /// The value's place among the kinds of values in the query order.
    package var queryRank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .string: return 3
        case .bytes: return 4
        case .stringSet: return 5
        case .timestamp: return 6
        case .uuid: return 7
        case .array: return 8
        case .object: return 9
        case .attachment: return 10
        }
    }

    /// Compares two values in the query order: negative when `self` comes
    /// first, zero when they are equal in that order, positive when `other` does.
    package func queryOrder(_ other: FieldValue) -> Int {
        let (left, right) = (queryRank, other.queryRank)
        if left != right { return left < right ? -1 : 1 }
        return compareWithinRank(other)
    }

    /// Whether `self` comes strictly before `other` in the query order.
    package func precedesInQueryOrder(_ other: FieldValue) -> Bool { queryOrder(other) < 0 }

    private func compareWithinRank(_ other: FieldValue) -> Int {
        switch (self, other) {
        case (.null, .null): return 0
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.int(let a), .int(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.double(let a), .double(let b)): return Self.compare(a, b)
        case (.int(let a), .double(let b)): return Self.compare(a, b)
        case (.double(let a), .int(let b)): return -Self.compare(b, a)
        case (.string(let a), .string(let b)): return Self.compare(a.unicodeScalars, b.unicodeScalars)
        case (.bytes(let a), .bytes(let b)): return Self.compare(a, b)
        case (.stringSet(let a), .stringSet(let b)):
            let (x, y) = (a.sorted { Self.compare($0.unicodeScalars, $1.unicodeScalars) < 0 },
                          b.sorted { Self.compare($0.unicodeScalars, $1.unicodeScalars) < 0 })
            for (p, q) in zip(x, y) {
                let order = Self.compare(p.unicodeScalars, q.unicodeScalars)
                if order != 0 { return order }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.timestamp(let a), .timestamp(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.uuid(let a), .uuid(let b)):
            return withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in Self.compare(Array(x), Array(y)) } }
        case (.array(let a), .array(let b)):
            for (p, q) in zip(a, b) {
                let order = p.queryOrder(q)
                if order != 0 { return order }
            }
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        case (.object(let a), .object(let b)):
            let (x, y) = (a.sorted { Self.compare($0.key.unicodeScalars, $1.key.unicodeScalars) < 0 },
                          b.sorted { Self.compare($0.key.unicodeScalars, $1.key.unicodeScalars) < 0 })
            for (p, q) in zip(x, y) {
                let name = Self.compare(p.key.unicodeScalars, q.key.unicodeScalars)
                if name != 0 { return name }
                let value = p.value.queryOrder(q.value)
                if value != 0 { return value }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.attachment(let a), .attachment(let b)):
            if a.size != b.size { return a.size < b.size ? -1 : 1 }
            if a.content != b.content { return a.content < b.content ? -1 : 1 }
            return Self.compare(a.mediaType.unicodeScalars, b.mediaType.unicodeScalars)
        default:
            // Same rank, so only the pairs above reach here.
            return 0
        }
    }

    /// Doubles numerically; NaN below every other number, and equal to itself.
    private static func compare(_ a: Double, _ b: Double) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        case (false, false): return a == b ? 0 : (a < b ? -1 : 1)
        }
    }

    /// An integer and a double, exactly (no rounding of large integers).
    private static func compare(_ a: Int64, _ b: Double) -> Int {
        if b.isNaN { return 1 }
        // 2^63 is exactly representable; every Int64 lies in [-2^63, 2^63).
        if b >= 9_223_372_036_854_775_808.0 { return -1 }
        if b < -9_223_372_036_854_775_808.0 { return 1 }
        let floor = b.rounded(.down)
        let whole = Int64(floor)
        if a != whole { return a < whole ? -1 : 1 }
        return b > floor ? -1 : 0
    }

    private static func compare<S: Sequence>(_ a: S, _ b: S) -> Int where S.Element: Comparable {
        var left = a.makeIterator(), right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}
