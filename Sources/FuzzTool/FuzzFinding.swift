/// A broken promise found by a fuzz target: the input made the code under
/// test do something it must never do (as opposed to an error it may
/// report). Fuzzers turn it into a crash, so libFuzzer keeps the input;
/// the regression tests report it as a failure.
package struct FuzzFinding: Error, Sendable, Hashable, CustomStringConvertible {
    /// The fuzz target that found it (`journal-reader`, `server-reply`).
    package var target: String
    /// The invariant that does not hold, in a few words.
    package var invariant: String
    /// What was seen.
    package var detail: String

    /// A finding of `target`.
    package init(target: String, invariant: String, detail: String) {
        self.target = target
        self.invariant = invariant
        self.detail = detail
    }

    /// `TARGET: INVARIANT: DETAIL`.
    package var description: String { "\(target): \(invariant): \(detail)" }
}
