import SyncJournalProtocol

extension QueryCondition {
    /// How a field is compared with a value.
    package enum Comparison: Sendable, Hashable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    }

    /// A condition as a tree of comparisons and logical joins.
    package indirect enum Term: Sendable, Hashable {
        /// The named field compared with a value in the query order.
        case compare(String, Comparison, FieldValue)
        /// The named field is null or missing.
        case isNull(String)
        /// The named field is a string with this prefix.
        case hasPrefix(String, String)
        /// The named field is a string containing this text, or a string set holding it.
        case contains(String, String)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)

        /// Whether a record with these fields satisfies the term.
        package func matches(_ fields: [String: FieldValue]) -> Bool {
            switch self {
            case .compare(let name, let comparison, let value):
                let order = (fields[name] ?? .null).queryOrder(value)
                switch comparison {
                case .equal: return order == 0
                case .notEqual: return order != 0
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                case .greaterOrEqual: return order >= 0
                }
            case .isNull(let name):
                if case .null = fields[name] ?? .null { return true }
                return false
            case .hasPrefix(let name, let prefix):
                guard case .string(let text) = fields[name] else { return false }
                return text.unicodeScalars.starts(with: prefix.unicodeScalars)
            case .contains(let name, let text):
                switch fields[name] {
                case .string(let value): return text.isEmpty || value.contains(text)
                case .stringSet(let members): return members.contains(text)
                default: return false
                }
            case .and(let a, let b): return a.matches(fields) && b.matches(fields)
            case .or(let a, let b): return a.matches(fields) || b.matches(fields)
            case .not(let a): return !a.matches(fields)
            }
        }

        /// The conjuncts of the term (itself, unless it is an `and`).
        package var conjuncts: [Term] {
            if case .and(let a, let b) = self { return a.conjuncts + b.conjuncts }
            return [self]
        }

        /// The range of values of one field that every record satisfying
        /// the term lies in, when the term says so directly (an index can answer it).
        package var valueRange: (field: String, range: ValueRange)? {
            switch self {
            case .compare(let name, let comparison, let value):
                switch comparison {
                case .equal: return (name, ValueRange(lower: value, lowerInclusive: true, upper: value, upperInclusive: true))
                case .less: return (name, ValueRange(lower: nil, lowerInclusive: true, upper: value, upperInclusive: false))
                case .lessOrEqual: return (name, ValueRange(lower: nil, lowerInclusive: true, upper: value, upperInclusive: true))
                case .greater: return (name, ValueRange(lower: value, lowerInclusive: false, upper: nil, upperInclusive: true))
                case .greaterOrEqual: return (name, ValueRange(lower: value, lowerInclusive: true, upper: nil, upperInclusive: true))
                case .notEqual: return nil
                }
            case .isNull(let name):
                return (name, ValueRange(lower: .null, lowerInclusive: true, upper: .null, upperInclusive: true))
            case .hasPrefix(let name, let prefix):
                return (name, ValueRange(lower: .string(prefix), lowerInclusive: true, upper: nil, upperInclusive: true, prefix: prefix))
            case .contains, .and, .or, .not:
                return nil
            }
        }
    }
}
