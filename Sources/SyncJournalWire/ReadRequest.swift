/// The body of `POST /v1/sync/read`: which row to read.
///
/// ```swift
/// let body = ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1"))
/// ```
public struct ReadRequest: Sendable, Hashable {
    /// The entity kind.
    public var kind: String
    /// The record id.
    public var id: String

    /// Creates a request.
    public init(kind: String, id: String) {
        self.kind = kind
        self.id = id
    }
}
