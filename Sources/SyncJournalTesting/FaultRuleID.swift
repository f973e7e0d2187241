/// Names a rule injected into a ``FaultInjectingSystemCalls``, to remove it or
/// ask how often it fired.
public struct FaultRuleID: Sendable, Hashable, CustomStringConvertible {
    /// The number the injector gave the rule (1 for its first rule).
    public let rawValue: Int

    /// Wraps a rule number.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `rule N`.
    public var description: String { "rule \(rawValue)" }
}
