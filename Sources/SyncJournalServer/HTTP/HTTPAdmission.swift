/// What the responder decides from a request's head alone, before any body
/// byte is read (``HTTPResponder/admit(_:)``).
///
/// ```swift
/// func admit(_ head: HTTPRequest) -> HTTPAdmission {
///     guard let user = users.user(forToken: token(head)) else { return .answer(unauthorized) }
///     return .proceed(owner: user)
/// }
/// ```
public enum HTTPAdmission: Sendable, Hashable {
    /// Read the body and hand the request to the responder, counted against
    /// `owner`'s limits (its concurrent requests and body bytes in flight);
    /// `nil`: the requests of no one in particular, which share one set of limits.
    case proceed(owner: String?)
    /// Answer this at once without reading the body, then close the connection.
    case answer(HTTPResponse)
}
