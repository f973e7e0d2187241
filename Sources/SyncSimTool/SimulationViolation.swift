/// An invariant that did not hold.
public struct SimulationViolation: Sendable, Hashable, CustomStringConvertible {
    /// 1-based step; `steps + 1` is the final phase (faults stopped, every device synced twice).
    public var step: Int
    /// The invariant that did not hold.
    public var invariant: Invariant
    /// What was seen.
    public var detail: String
    /// `invariant: detail`.
    public var description: String { "\(invariant): \(detail)" }
}
