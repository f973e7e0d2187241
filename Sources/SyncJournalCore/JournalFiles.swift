/// Every file name derived from a journal's path, in one place: the journal
/// itself and the side files its writer makes next to it. The names on disk
/// are part of the format (tools and people look for them), so they never
/// change.
///
/// - `<journal>.lock`: the writer's lock file (an exclusive record lock on it
///   keeps a second writer out); it stays after the writer closes.
/// - `<journal>.creating`: a new journal before the rename that publishes it.
/// - `<journal>.checkpoint`: a checkpoint rewrite before the rename that
///   replaces the journal. A journal missing beside it is never created
///   anew: the open adopts it when it is complete, and refuses otherwise
///   (``JournalError/missingBesideCheckpoint(path:checkpoint:)``). Beside the
///   journal it is removed only when proven redundant
///   (``JournalCheckpointLeftover``).
/// - `<journal>.checkpoint-kept` (then `-2`, `-3`, …): a leftover checkpoint
///   file nothing proved redundant, kept for inspection.
/// - `<journal>.torn-<offset>` (then `-2`, `-3`, …): the non-zero bytes of a
///   torn tail cut at `offset` by recovery, kept for inspection
///   (``TornTailFile``); a journal keeps the newest ``TornTailFile/kept``.
package struct JournalFiles: Sendable, Hashable {
    /// The journal's path.
    package let journal: String

    /// The files of the journal at `journal`.
    package init(journal: String) { self.journal = journal }

    /// The writer's lock file.
    package var lock: String { journal + ".lock" }

    /// Where a new journal is written before it is renamed into place.
    package var creating: String { journal + ".creating" }

    /// Where a checkpoint rewrite is written before it replaces the journal.
    package var checkpoint: String { journal + ".checkpoint" }

    /// Where a leftover checkpoint file not proven redundant is kept;
    /// `attempt` numbers the names tried when earlier ones exist (1: no number).
    package func keptCheckpoint(attempt: Int = 1) -> String {
        let base = checkpoint + "-kept"
        return attempt <= 1 ? base : base + "-" + String(attempt)
    }

    /// What comes between the journal's path and the offset in a torn-tail file's name.
    package static let tornTailInfix = ".torn-"

    /// The side file for a torn tail cut at `offset`; `attempt` numbers the
    /// names tried when earlier ones exist (1: no number).
    package func tornTail(at offset: Int64, attempt: Int = 1) -> String {
        let base = journal + Self.tornTailInfix + String(offset)
        return attempt <= 1 ? base : base + "-" + String(attempt)
    }

    /// Whether `path` names one of this journal's torn-tail side files.
    package func isTornTail(_ path: String) -> Bool {
        let prefix = journal + Self.tornTailInfix
        guard path.hasPrefix(prefix) else { return false }
        let rest = path.dropFirst(prefix.count)
        return !rest.isEmpty && rest.allSatisfy { $0.isNumber || $0 == "-" }
    }

    /// The side files with fixed names (lock, creating, checkpoint); torn
    /// tails are found with ``isTornTail(_:)``.
    package var fixedSideFiles: [String] { [lock, creating, checkpoint] }
}
