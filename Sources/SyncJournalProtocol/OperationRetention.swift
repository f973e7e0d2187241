/// How long a server remembers applied operation ids, and how it judges a
/// mutation it does not remember once it forgets them (journals/PROTOCOL.md,
/// "Remembered operations").
///
/// A remembered operation is forgotten (pruned) once it was remembered more
/// than ``retentionMilliseconds`` ago by the server's clock. A mutation whose
/// id is not remembered may then be a resend of one that was applied and
/// forgotten; ``mayBeForgotten(_:at:)`` says when the server must assume so.
/// The judgement starts ``clockAllowanceMilliseconds`` before the pruning
/// does, so a device clock that runs fast by up to that much still has its
/// old edits judged as possibly applied.
///
/// Package access: how long a server remembers is the server's policy,
/// which no app sets or reads; `sync-server` and the reference server apply
/// it through `StorageRules`, and the protocol module is where both reach it.
///
/// ```swift
/// let retention = OperationRetention(days: 30)
/// if retention.mayBeForgotten(mutation, at: now) { /* judge without memory */ }
/// ```
package struct OperationRetention: Sendable, Hashable {
    /// How long an applied operation id is remembered, in milliseconds of server time.
    package let retentionMilliseconds: Int64
    /// How far a device clock may run ahead of the server's and still have
    /// its forgotten edits recognised: a day, or half the retention when that
    /// is shorter.
    package var clockAllowanceMilliseconds: Int64 { min(Self.dayMilliseconds, retentionMilliseconds / 2) }

    /// Milliseconds in a day.
    package static let dayMilliseconds: Int64 = 86_400_000
    /// The retention `sync-server` keeps when not told otherwise.
    package static let defaultDays = 30

    /// A retention of `retentionMilliseconds` (at least 1).
    package init(retentionMilliseconds: Int64) {
        self.retentionMilliseconds = max(1, retentionMilliseconds)
    }

    /// A retention of whole days (1 or more; larger values are capped so
    /// the milliseconds fit in Int64).
    package init(days: Int) {
        let capped = Int64(min(max(days, 1), 100_000_000))
        self.init(retentionMilliseconds: capped * Self.dayMilliseconds)
    }

    /// The server time before which remembered operations are pruned at
    /// `now`: every row remembered strictly before it is past the retention.
    package func pruneBefore(now: Int64) -> Int64 {
        let (limit, overflow) = now.subtractingReportingOverflow(retentionMilliseconds)
        return overflow ? Int64.min : limit
    }

    /// Whether a mutation the server does not remember, arriving at server
    /// time `now`, may have been applied and forgotten: it carries no
    /// `queuedAt`, or was queued (by the device's clock) more than the
    /// retention less the clock allowance ago.
    package func mayBeForgotten(_ mutation: Mutation, at now: Int64) -> Bool {
        guard let queuedAt = mutation.queuedAt else { return true }
        let (horizon, overflow) = now.subtractingReportingOverflow(retentionMilliseconds - clockAllowanceMilliseconds)
        return overflow || queuedAt < horizon
    }
}
