/// What answers the requests an ``HTTPServer`` receives. Called on the
/// connection's own thread, so it may block (on a database, say).
///
/// ```swift
/// struct Hello: HTTPResponder {
///     func respond(to request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 200, body: Array("hi".utf8)) }
///     func respond(to failure: HTTPRequestFailure) -> HTTPResponse { HTTPResponse(status: failure.status) }
/// }
/// ```
public protocol HTTPResponder: Sendable {
    /// The answer to one well-formed request.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// The answer to a request the server refused before it was whole (the
    /// connection closes afterwards).
    func respond(to failure: HTTPRequestFailure) -> HTTPResponse
}
