/// The way back to one connection for its next response, from any thread at
/// any later time: a worker uses it when the responder returns, and a
/// request parked until something happens (a long poll) can keep it and
/// answer later without holding a thread. A handle whose connection has
/// closed meanwhile (or whose server stopped) does nothing.
///
/// ```swift
/// let handle = ...   // given with the request
/// handle.send(HTTPResponse.json(status: 200, body: body))
/// ```
package struct ResponseHandle: Sendable {
    let loop: EventLoop
    /// The connection's number (never reused; a descriptor may be).
    let connection: UInt64
    /// Whether the request asked to close the connection after its answer.
    let requestWantsClose: Bool

    /// Hands `response` to the event loop, which writes it on the connection.
    package func send(_ response: HTTPResponse) {
        loop.deliver(response, to: connection, closing: requestWantsClose || response.closesConnection)
    }
}
