import SyncJournalProtocol
extension SyncFailure {
    /// Why a pull stopped before the server said it had nothing more.
    public enum PullStop: Sendable, Hashable, CustomStringConvertible {
        /// ``SyncEngine/Options/maximumPages`` pages were pulled and the server
        /// still had more: its cursor is not advancing (a server bug).
        case pageLimit(pages: Int)
        /// A full re-pull of `kind` took ``SyncEngine/Options/maximumResyncPages`` pages.
        case resyncPageLimit(kind: String, pages: Int)
        /// The server refused as expired the cursors of `kinds` again, right
        /// after they were re-pulled from the start.
        case cursorExpiredAgain(kinds: [String])
        /// The transport refused the full re-pull of `kind`.
        case resyncRefused(kind: String, TransportError)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .pageLimit(let pages): return "pull did not finish after \(pages) pages; the server's cursor is not advancing"
            case .resyncPageLimit(let kind, let pages): return "resync of \(kind) did not finish after \(pages) pages"
            case .cursorExpiredAgain(let kinds): return TransportError.cursorExpired(kinds: kinds).description
            case .resyncRefused(let kind, let error): return "resync of \(kind): \(error)"
            }
        }
    }
}
