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
    /// Headers every response sent through this handle carries (say, the server's identity).
    var addedHeaders: [HTTPHeader] = []

    /// This handle, adding `headers` to every response it sends.
    ///
    /// ```swift
    /// let identified = handle.adding([HTTPHeader(name: "Sync-Server-Identity", value: identity.text)])
    /// ```
    package func adding(_ headers: [HTTPHeader]) -> ResponseHandle {
        var handle = self
        handle.addedHeaders += headers
        return handle
    }

    /// Hands `response` to the event loop, which writes it on the connection.
    package func send(_ response: HTTPResponse) {
        var response = response
        response.headers += addedHeaders
        loop.deliver(response, to: connection, closing: requestWantsClose || response.closesConnection)
    }

    /// Tells the event loop the request is kept to be answered later
    /// (with ``send(_:)``, from any thread): meanwhile the loop watches the
    /// connection, calls `onClose` if the peer goes away first, and answers
    /// `answerOnStop` if the server stops first. Call it before anything
    /// that might ``send(_:)`` the answer, so the two arrive in order.
    ///
    /// ```swift
    /// handle.park(answerOnStop: timedOut) { registry.drop(waiter) }
    /// ```
    package func park(answerOnStop: HTTPResponse, onClose: @escaping @Sendable () -> Void) {
        var answer = answerOnStop
        answer.headers += addedHeaders
        loop.park(connection, answerOnStop: answer, onClose: onClose)
    }
}
