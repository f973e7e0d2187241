import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How one `URLSession` data task ended.
enum DataTaskOutcome: @unchecked Sendable {
    // @unchecked: URLResponse and Error are immutable once the task hands them over.
    /// A reply arrived in full.
    case completed(URLResponse, Data)
    /// No reply: the session's error.
    case failed(Error)
    /// The awaiting task was cancelled (before or while the request ran).
    case cancelled
    /// The deadline passed before the reply was complete.
    case timedOut
}
