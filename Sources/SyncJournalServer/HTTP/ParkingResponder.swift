/// An ``HTTPResponder`` that may keep a request and answer it later (a long
/// poll) instead of answering on the worker thread: it returns `nil` after
/// ``ResponseHandle/park(answerOnStop:onClose:)`` and answers through the
/// handle when something happens. The worker is free meanwhile, and the
/// request no longer counts against its owner's requests in storage.
///
/// ```swift
/// func respond(to request: HTTPRequest, handle: ResponseHandle) -> HTTPResponse? {
///     handle.park(answerOnStop: timedOut) { waiters.drop(id) }
///     waiters.add(id, handle)
///     return nil
/// }
/// ```
package protocol ParkingResponder: HTTPResponder {
    /// The answer to one well-formed request, or `nil` when the request was
    /// parked and `handle` will be answered later (from any thread).
    func respond(to request: HTTPRequest, handle: ResponseHandle) -> HTTPResponse?
}
