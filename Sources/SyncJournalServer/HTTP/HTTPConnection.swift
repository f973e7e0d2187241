/// One connection's state. Only the event loop's thread touches it (the
/// loop owns it; workers see a ``ResponseHandle``, never this).
final class HTTPConnection {
    /// Where the connection is in its request cycle.
    enum Phase {
        /// Waiting for, or reading, a request head.
        case head
        /// The head is admitted; reading its body.
        case body(HTTPRequestParser.Head, owner: String)
        /// A worker has the request; input is not read meanwhile.
        case working
        /// The responder keeps the request to answer later (a long poll)
        /// without a thread: input is read, so a peer that goes away is
        /// seen, and buffered for the next request. `answerOnStop` answers
        /// it when the server stops; `onClose` tells its keeper the
        /// connection closed before an answer.
        case parked(answerOnStop: HTTPResponse, onClose: @Sendable () -> Void)
        /// The last answer is written or being written; input is read and
        /// discarded until the peer closes, the byte bound or `until`.
        case lingering(until: Int64)
    }

    /// A number never reused (descriptors are).
    let id: UInt64
    let socket: ConnectionSocket
    /// The peer's address, for the per-address limit.
    let address: String
    /// Whether it counts against the connection limits (a connection being
    /// refused with a 503 does not).
    let counted: Bool

    var phase: Phase = .head
    /// Received bytes not yet consumed.
    var input: [UInt8] = []
    /// Empty lines skipped before the current request line.
    var emptyLines = 0
    /// When the current request's first byte arrived (the accept time for
    /// a new connection); `nil` while idle between requests.
    var requestStart: Int64?
    /// Since when the connection has been idle between requests.
    var idleSince: Int64
    /// Bytes to write, from `outputOffset` on.
    var output: [UInt8] = []
    var outputOffset = 0
    /// When the oldest unwritten output was queued.
    var outputSince: Int64 = 0
    /// Whether the write side closes once `output` is written.
    var closeAfterOutput = false
    /// The owner's reservation while the request is read (handed to the job on submission).
    var reservation: (owner: String, bytes: Int)?
    /// Bytes discarded while lingering.
    var discarded = 0
    var watchingReadable = true
    var watchingWritable = false
    var isClosed = false

    init(id: UInt64, socket: ConnectionSocket, address: String, counted: Bool, now: Int64) {
        self.id = id
        self.socket = socket
        self.address = address
        self.counted = counted
        requestStart = now
        idleSince = now
    }

    /// Whether output waits to be written.
    var hasOutput: Bool { outputOffset < output.count }
}
