import SyncJournalProtocol

/// The body of `POST /v1/sync/push`: `{"mutations": [MUTATION, …]}`.
///
/// ```swift
/// let body = PushRequestCodec.encode(mutations)          // the client
/// let received = try PushRequestCodec.decode(body)       // the server
/// ```
public enum PushRequestCodec {
    /// The request body; `includingQueuedAt: false` leaves every
    /// mutation's `queuedAt` out, `includingModelVersion: false` every
    /// `modelVersion` (for a server older than the member).
    public static func encode(_ mutations: [Mutation], includingQueuedAt: Bool = true, includingModelVersion: Bool = true) -> [UInt8] {
        JSONValue.object(["mutations": .array(mutations.map {
            MutationCodec.encode($0, includingQueuedAt: includingQueuedAt, includingModelVersion: includingModelVersion)
        })]).encoded()
    }

    /// The mutations of a request body, in order. One operation id may
    /// appear once: a push naming it twice is refused whole (its second
    /// result could only repeat the first, and a client that builds such a
    /// push has lost track of its outbox).
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the
    ///   problem; a repeated operation id is ``WireError/invalidValue(path:reason:)``
    ///   at its second occurrence, naming the id and the first.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [Mutation] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["mutations"])
        let items = try object.array("mutations")
        var mutations: [Mutation] = []
        mutations.reserveCapacity(items.count)
        var firstIndex: [OperationID: Int] = [:]
        firstIndex.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let path = JSONPath.element(object.path(of: "mutations"), index)
            let mutation = try MutationCodec.decode(item, at: path)
            if let first = firstIndex.updateValue(index, forKey: mutation.operationID) {
                throw .invalidValue(path: path + ".operationId",
                                    reason: "operation id \(mutation.operationID) appears twice in one push (first at $.mutations[\(first)])")
            }
            mutations.append(mutation)
        }
        return mutations
    }
}
