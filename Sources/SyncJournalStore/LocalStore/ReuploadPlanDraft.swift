/// The reconciliation plan a write decided, handed back to the caller once
/// the write is durable (the decision is made on the store's thread as the
/// write is formed, against the staged state).
final class ReuploadPlanDraft {
    /// The plan decided, empty until then.
    var plan = ReuploadPlan()
}
