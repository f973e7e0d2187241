import SyncJournalProtocol
import SyncJournalStore

extension SyncFailure {
    /// What was wrong with a server's reply.
    public enum MalformedReply: Sendable, Hashable, CustomStringConvertible {
        /// A push reply's results do not answer exactly the mutations sent.
        case pushResultsMismatch(results: Int, mutations: Int)
        /// A push reply's rows cannot be kept (a row of another record, an
        /// empty id or field name); the store's refusal says which.
        case pushRows(StoreError)
        /// A pull page cannot be kept (kinds not asked for, rows out of order
        /// or after the limit, cursors that do not match); `reason` says which.
        case pullPage(reason: String)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .pushResultsMismatch(let results, let mutations): return "malformed push reply: \(results) results for \(mutations) mutations"
            case .pushRows(let error): return "malformed push reply: \(error)"
            case .pullPage(let reason): return "malformed pull reply: \(reason)"
            }
        }
    }
}
