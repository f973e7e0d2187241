/// What one load client counted: requests, what they carried, their
/// latencies, and its errors. Clients keep their own and merge at the end,
/// so counting takes no lock.
public struct LoadTally: Sendable, Hashable {
    /// Pushes answered 200.
    public var pushes = 0
    /// Mutations in those pushes that the server applied.
    public var mutations = 0
    /// Pulls answered 200.
    public var pulls = 0
    /// Rows those pulls returned.
    public var rows = 0
    /// Latencies of the successful pushes, in seconds.
    public var pushLatencies: [Double] = []
    /// Latencies of the successful pulls, in seconds.
    public var pullLatencies: [Double] = []
    /// Failed requests (a transport error, or a push result other than applied).
    public var errors = 0
    /// The first few error descriptions, for the report.
    public var errorSamples: [String] = []

    /// An empty tally.
    public init() {}

    /// Counts an error and keeps its description if it is among the first five.
    public mutating func noteError(_ description: String) {
        errors += 1
        if errorSamples.count < 5 { errorSamples.append(description) }
    }

    /// Adds `other` into this tally.
    public mutating func merge(_ other: LoadTally) {
        pushes += other.pushes
        mutations += other.mutations
        pulls += other.pulls
        rows += other.rows
        pushLatencies += other.pushLatencies
        pullLatencies += other.pullLatencies
        errors += other.errors
        for sample in other.errorSamples where errorSamples.count < 5 { errorSamples.append(sample) }
    }

    /// The `fraction` quantile (0...1) of `latencies` in milliseconds, nearest rank; `nil` when empty.
    ///
    /// ```swift
    /// LoadTally.quantileMilliseconds([0.001, 0.002, 0.010], 0.5)   // 2.0
    /// ```
    public static func quantileMilliseconds(_ latencies: [Double], _ fraction: Double) -> Double? {
        guard !latencies.isEmpty else { return nil }
        let sorted = latencies.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)] * 1_000
    }
}
