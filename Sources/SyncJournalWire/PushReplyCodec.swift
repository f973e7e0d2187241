import SyncJournalProtocol

/// The 200 body of `POST /v1/sync/push`: `{"results": [RESULT, …]}`, one
/// per mutation, in the mutations' order.
///
/// ```swift
/// let body = PushReplyCodec.encode(results)                              // the server
/// let results = try PushReplyCodec.decode(body, answering: mutations)    // the client
/// ```
public enum PushReplyCodec {
    /// The reply body; `includingModelVersions: false` leaves the rows'
    /// `modelVersion` out, for a client that did not say it reads it.
    ///
    /// Written straight to bytes (the same bytes as through ``JSONValue``):
    /// a reply echoes every applied row, so it is about as large as its push.
    public static func encode(_ results: [MutationResult], includingModelVersions: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 * results.count + 16)
        out.append(contentsOf: #"{"results":["#.utf8)
        for (index, result) in results.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            MutationResultCodec.write(result, includingModelVersions: includingModelVersions, to: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// The results of a reply body, without comparing them to a request.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> [MutationResult] {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["results"])
        let items = try object.array("results")
        var results: [MutationResult] = []
        results.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            results.append(try MutationResultCodec.decode(item, at: JSONPath.element(object.path(of: "results"), index)))
        }
        return results
    }

    /// The results of a reply to `mutations`: exactly one per mutation, each
    /// naming its mutation's operation id, in the same order.
    ///
    /// - Throws: ``WireError/resultCountMismatch(expected:received:)``,
    ///   ``WireError/resultForAnotherOperation(path:expected:received:)``, or
    ///   any shape error of ``decode(_:parser:)``.
    public static func decode(_ body: some Collection<UInt8>, answering mutations: [Mutation],
                              parser: JSONParser = JSONParser()) throws(WireError) -> [MutationResult] {
        let results = try decode(body, parser: parser)
        if results.count != mutations.count { throw .resultCountMismatch(expected: mutations.count, received: results.count) }
        for (index, (result, mutation)) in zip(results, mutations).enumerated() where result.operationID != mutation.operationID {
            throw .resultForAnotherOperation(path: JSONPath.element("$.results", index), expected: mutation.operationID, received: result.operationID)
        }
        return results
    }
}
