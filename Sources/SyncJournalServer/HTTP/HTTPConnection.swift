/// Serves one accepted connection on its own thread: reads requests (keep-alive
/// and pipelining), answers them in order, and closes on any doubt about
/// the byte stream. Nothing here can affect another connection.
struct HTTPConnection {
    let socket: ConnectionSocket
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    /// Readable once the server is stopping.
    let wake: Int32
    /// Whether the server is stopping (answers then close the connection).
    let isStopping: @Sendable () -> Bool

    private var parser: HTTPRequestParser { HTTPRequestParser(configuration: configuration) }

    func run() {
        socket.configure(writeTimeoutMilliseconds: configuration.writeTimeoutMilliseconds)
        var buffer: [UInt8] = []
        do throws(SocketError) {
            while true {
                // Between requests: wait for the next one, or close when idle or stopping.
                buffer.removeFirst(HTTPRequestParser.leadingEmptyLines(buffer))
                if buffer.isEmpty {
                    if isStopping() { break }
                    let readiness = try socket.waitForInput(milliseconds: configuration.idleTimeoutMilliseconds, wake: wake)
                    guard readiness == .readable else { break }
                    guard try socket.read(appendingTo: &buffer) > 0 else { break }
                    continue
                }
                switch try receiveRequest(&buffer) {
                case .request(let request):
                    let response = responder.respond(to: request)
                    let closing = request.wantsClose || response.closesConnection || isStopping()
                    try socket.write(response.serialized(closing: closing))
                    if closing {
                        socket.closeAfterAnswer()
                        return
                    }
                case .refused(let failure):
                    let response = responder.respond(to: failure)
                    try socket.write(response.serialized(closing: true))
                    socket.closeAfterAnswer()
                    return
                case .closed:
                    socket.close()
                    return
                }
            }
        } catch {
            // A reset, a send timeout: this connection is over; nothing else is affected.
        }
        socket.close()
    }

    private enum Received {
        case request(HTTPRequest)
        case refused(HTTPRequestFailure)
        /// End of file before a whole request: nobody to answer.
        case closed
    }

    /// Reads until `buffer` holds one whole request (or the request fails),
    /// within the read timeout from now; leaves pipelined bytes after it in `buffer`.
    private func receiveRequest(_ buffer: inout [UInt8]) throws(SocketError) -> Received {
        let deadline = MonotonicClock.milliseconds() + Int64(configuration.readTimeoutMilliseconds)
        func readMore() throws(SocketError) -> Received? {
            let remaining = Int(deadline - MonotonicClock.milliseconds())
            guard remaining > 0 else { return .refused(.timeout(milliseconds: configuration.readTimeoutMilliseconds)) }
            // No wake-up here: a request already arriving is in flight and gets to finish.
            guard try socket.waitForInput(milliseconds: remaining, wake: nil) == .readable else {
                return .refused(.timeout(milliseconds: configuration.readTimeoutMilliseconds))
            }
            return try socket.read(appendingTo: &buffer) == 0 ? .closed : nil
        }
        var head: HTTPRequestParser.Head
        while true {
            switch parser.parseHead(buffer) {
            case .incomplete:
                if let outcome = try readMore() { return outcome }
                continue
            case .failure(let failure):
                return .refused(failure)
            case .head(let parsed):
                head = parsed
            }
            break
        }
        let total = head.length + head.contentLength
        if head.expectsContinue && buffer.count < total {
            try socket.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        while buffer.count < total {
            if let outcome = try readMore() { return outcome }
        }
        var request = head.request
        request.body = Array(buffer[head.length..<total])
        buffer.removeFirst(total)
        return .request(request)
    }
}
