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
    ///
    /// The body is read straight from its bytes, not through a ``JSONValue``
    /// tree: it is checked whole first (a body that is not JSON fails as
    /// through ``JSONParser``), then each mutation is read in turn and its
    /// fields built once, an array at its final size. A push's memory is
    /// then its body and its mutations' values, whatever their shape.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [Mutation] {
        try decode(body, parser: parser) { (scanner: inout JSONScanner, path: String) throws(WireError) in
            try scanner.decodeMutation(at: path)
        }
    }

    /// The items of a request body, each read by `readMutation` from the
    /// position of a mutation (found at the path it is given), with every
    /// check of ``decode(_:parser:)`` on the body and the list.
    static func decode<Item: PushedItem>(_ body: some Collection<UInt8>, parser: JSONParser,
                                         mutation readMutation: (inout JSONScanner, String) throws(WireError) -> Item) throws(WireError) -> [Item] {
        let byteCount = body.count
        if byteCount > parser.maximumByteCount { throw .tooLarge(byteCount: byteCount, limit: parser.maximumByteCount) }
        var scanner = JSONScanner(bytes: Array(body), maximumDepth: parser.maximumDepth)
        try scanner.validateDocument()
        scanner.skipWhitespace()
        let listPath = JSONPath.member(JSONPath.root, "mutations")
        let root = try scanner.objectMembers(at: JSONPath.root, allowed: ["mutations"])
        guard let listAt = root["mutations"] else { throw .missingMember(path: listPath) }
        scanner.position = listAt
        guard scanner.bytes[listAt] == UInt8(ascii: "[") else { throw .wrongType(path: listPath, expected: "an array") }
        let count = scanner.countElements()
        var mutations: [Item] = []
        mutations.reserveCapacity(count)
        var firstIndex: [OperationID: Int] = [:]
        firstIndex.reserveCapacity(count)
        for index in 0..<count {
            let path = JSONPath.element(listPath, index)
            scanner.skipWhitespace()
            let mutation = try readMutation(&scanner, path)
            scanner.skipSeparator()
            if let first = firstIndex.updateValue(index, forKey: mutation.operationID) {
                throw .invalidValue(path: path + ".operationId",
                                    reason: "operation id \(mutation.operationID) appears twice in one push (first at $.mutations[\(first)])")
            }
            mutations.append(mutation)
        }
        return mutations
    }
}

/// What a push's list holds, for the check that no operation id appears twice.
protocol PushedItem {
    var operationID: OperationID { get }
}

extension Mutation: PushedItem {}

extension EncodedMutation: PushedItem {
    var operationID: OperationID { mutation.operationID }
}
