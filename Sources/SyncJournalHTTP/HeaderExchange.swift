/// What an attachment request adds to the transport's JSON exchange: a
/// chunk travels as the raw body, named by headers, and a downloaded
/// chunk's size and hash come back as headers beside its bytes.
struct HeaderExchange: Sendable {
    /// Headers sent with the request.
    var sent: [(name: String, value: String)] = []
    /// Whether the body is raw bytes (`application/octet-stream`) rather than JSON.
    var bytesBody = false
    /// Headers of a passing reply to keep in ``HTTPReply/headers``.
    var kept: [String] = []
}
