/// What answers the requests an ``HTTPServer`` receives. ``admit(_:)`` runs
/// on the server's event loop and must not block; ``respond(to:)-(HTTPRequest)``
/// runs on a worker thread, so it may block (on a database, say).
///
/// ```swift
/// struct Hello: HTTPResponder {
///     func respond(to request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 200, body: Array("hi".utf8)) }
///     func respond(to failure: HTTPRequestFailure) -> HTTPResponse { HTTPResponse(status: failure.status) }
/// }
/// ```
public protocol HTTPResponder: Sendable {
    /// Decides from the head (its body still empty) whether the body is read
    /// and whose limits the request counts against. Runs on the event loop:
    /// quick checks only (a token lookup), never storage.
    func admit(_ head: HTTPRequest) -> HTTPAdmission
    /// The answer to one well-formed request.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// The answer to a request the server refused before it was whole (the
    /// connection closes afterwards).
    func respond(to failure: HTTPRequestFailure) -> HTTPResponse
}

extension HTTPResponder {
    /// Every request proceeds, all under one shared set of limits.
    ///
    /// ```swift
    /// Hello().admit(HTTPRequest(method: "GET", target: "/"))   // .proceed(owner: nil)
    /// ```
    public func admit(_ head: HTTPRequest) -> HTTPAdmission { .proceed(owner: nil) }
}
