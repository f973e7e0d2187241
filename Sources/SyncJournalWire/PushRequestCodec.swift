import SyncJournalProtocol

/// The body of `POST /v1/sync/push`: `{"mutations": [MUTATION, …]}`.
///
/// ```swift
/// let body = PushRequestCodec.encode(mutations)          // the client
/// let received = try PushRequestCodec.decode(body)       // the server
/// ```
public enum PushRequestCodec {
    /// The request body.
    public static func encode(_ mutations: [Mutation]) -> [UInt8] {
        JSONValue.object(["mutations": .array(mutations.map(MutationCodec.encode))]).encoded()
    }

    /// The mutations of a request body, in order.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [Mutation] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["mutations"])
        let items = try object.array("mutations")
        var mutations: [Mutation] = []
        mutations.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            mutations.append(try MutationCodec.decode(item, at: JSONPath.element(object.path(of: "mutations"), index)))
        }
        return mutations
    }
}
