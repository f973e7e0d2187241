/// What a run (with its shrinking) found, and the text the tool prints.
public struct SimulationOutcome: Sendable, Hashable {
    /// The first violation, if any.
    public var violation: SimulationViolation?
    /// The statistics of the (unshrunk) run.
    public var statistics: SimulationStatistics
    /// One summary line, or the violation with its shrunk trace.
    public var report: String
}
