import SyncJournalProtocol

/// What one load client does next and what it has counted, apart from the
/// HTTP client it goes through: the next batch of new records, the next
/// pull from its cursor, and the tally of answers and latencies.
struct LoadClientLoop {
    let configuration: LoadConfiguration
    /// The client's own kind: no other client or run writes it.
    let kind: String
    var tally = LoadTally()
    private var cursor: PullCursor?
    private var next = 0

    init(configuration: LoadConfiguration, kind: String) {
        self.configuration = configuration
        self.kind = kind
    }

    /// The next push's creates (ids `r0`, `r1`, … in order), or nil when the client only pulls.
    mutating func nextPush() -> [Mutation]? {
        guard configuration.batchSize > 0 else { return nil }
        let mutations = (0..<configuration.batchSize).map { offset in
            Mutation(operationID: .random(), kind: kind, op: .create, recordID: "r\(next + offset)",
                     fields: ["n": .int(Int64(next + offset)), "text": .string("load test row \(next + offset)")], baseUpdatedAt: nil)
        }
        next += configuration.batchSize
        return mutations
    }

    /// Counts a push answered after `latency`: each applied create, and any other outcome as an error.
    mutating func pushed(_ results: [MutationResult], after latency: Duration) {
        tally.pushLatencies.append(Self.seconds(latency))
        tally.pushes += 1
        for result in results {
            if case .applied = result.outcome {
                tally.mutations += 1
            } else {
                tally.noteError("push result for \(kind): \(result.outcome)")
            }
        }
    }

    /// Whether another pull of this round may start: before the deadline, or always when the client only pulls.
    func mayPull(before deadline: ContinuousClock.Instant) -> Bool {
        ContinuousClock().now < deadline || configuration.batchSize == 0
    }

    /// Whether a pull-only client has reached the deadline.
    func endsPulls(at deadline: ContinuousClock.Instant) -> Bool {
        configuration.batchSize == 0 && ContinuousClock().now >= deadline
    }

    /// The next pull: the client's kind from its cursor.
    func nextPull() -> PullRequest {
        PullRequest(cursors: [kind: cursor], limit: configuration.pullLimit)
    }

    /// Counts a page answered after `latency` and moves the cursor; a
    /// pull-only client at the end of its kind starts again from the start.
    mutating func pulled(_ page: PullPage, after latency: Duration) {
        tally.pullLatencies.append(Self.seconds(latency))
        tally.pulls += 1
        tally.rows += page.rows.count
        if let moved = page.nextCursors[kind] { cursor = moved }
        if configuration.batchSize == 0 && !page.hasMore { cursor = nil }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
