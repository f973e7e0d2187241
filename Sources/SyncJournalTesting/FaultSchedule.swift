/// Which of the calls a ``FaultRule`` matches it fires on.
///
/// Calls are counted per rule, from the moment the rule is injected, and only
/// those of the rule's ``SystemCall`` kind whose file matches its
/// ``TargetFile``. The first such call is call 1.
public enum FaultSchedule: Sendable, Hashable, CustomStringConvertible {
    /// Fires on the `n`th matching call only (1-based).
    case nthCall(Int)
    /// Fires on every matching call.
    case everyCall
    /// Fires on the `n`th matching call and every one after it (1-based).
    case fromNthCall(Int)

    /// Whether the rule fires on its `count`th matching call (1-based).
    public func fires(onCall count: Int) -> Bool {
        switch self {
        case .nthCall(let n): return count == n
        case .everyCall: return true
        case .fromNthCall(let n): return count >= n
        }
    }

    /// A short explanation, such as `call 3`.
    public var description: String {
        switch self {
        case .nthCall(let n): return "call \(n)"
        case .everyCall: return "every call"
        case .fromNthCall(let n): return "call \(n) and later"
        }
    }
}
