import SyncJournalProtocol

/// The body of `POST /v1/sync/read`: which row to read.
///
/// ```swift
/// let body = ReadRequestCodec.encode(ReadRequest(kind: "pin", id: "p1"))
/// let shared = ReadRequest(kind: "pin", id: "p1", space: SpaceID("2f9d1c3a-4b5e-4f60-8a71-9c2d3e4f5a6b")!)
/// ```
public struct ReadRequest: Sendable, Hashable {
    /// The entity kind.
    public var kind: String
    /// The record id.
    public var id: String
    /// The record's space (the personal space unless named).
    public var space: SpaceID

    /// Creates a request.
    public init(kind: String, id: String, space: SpaceID = .personal) {
        self.kind = kind
        self.id = id
        self.space = space
    }
}
