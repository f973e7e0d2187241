import SyncJournalProtocol

/// The JSON of an ``ErrorBody``.
///
/// ```swift
/// let body = ErrorBodyCodec.encode(ErrorBody(code: .badCursor, message: "\"abc\" is not a cursor"))
/// let error = try ErrorBodyCodec.decode(body)
/// ```
public enum ErrorBodyCodec {
    /// The reply body; `kinds` and the `server_mismatch` members are written only when given.
    public static func encode(_ error: ErrorBody) -> [UInt8] {
        var members: [String: JSONValue] = ["error": .string(error.code.rawValue), "message": .string(error.message)]
        if let kinds = error.kinds { members["kinds"] = .array(kinds.map { .string($0) }) }
        if let expected = error.expected { members["expected"] = .string(expected.text) }
        if let found = error.found { members["found"] = .string(found.text) }
        if let seenStamp = error.seenStamp { members["seenStamp"] = .integer(seenStamp) }
        if let latestStamp = error.latestStamp { members["latestStamp"] = .integer(latestStamp) }
        return JSONValue.object(members).encoded()
    }

    /// The error a reply body stands for; any code is kept, known or not.
    /// Every member but `error` and `message` may be left out.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ErrorBody {
        let object = try JSONObjectReader.body(body, parser: parser,
                                               allowed: ["error", "message", "kinds", "expected", "found", "seenStamp", "latestStamp"])
        let code = try object.name("error")
        let message = try object.string("message")
        var kinds: [String]?
        if object.members["kinds"] != nil {
            let kindsPath = object.path(of: "kinds")
            kinds = []
            for (index, item) in try object.array("kinds").enumerated() {
                guard case .string(let kind) = item, !kind.isEmpty else {
                    throw .wrongType(path: JSONPath.element(kindsPath, index), expected: "a non-empty kind")
                }
                kinds?.append(kind)
            }
        }
        return ErrorBody(code: ProtocolErrorCode(rawValue: code), message: message, kinds: kinds,
                         expected: try identity("expected", in: object), found: try identity("found", in: object),
                         seenStamp: try object.absentOrInt64("seenStamp"), latestStamp: try object.absentOrInt64("latestStamp"))
    }

    /// A member that may be left out, and is a server identity when given.
    private static func identity(_ name: String, in object: JSONObjectReader) throws(WireError) -> ServerIdentity? {
        guard object.members[name] != nil else { return nil }
        let text = try object.string(name)
        guard let identity = ServerIdentity(text) else {
            throw .invalidValue(path: object.path(of: name), reason: "not a server identity (1 to \(ServerIdentity.maximumLength) of A-Z a-z 0-9 - _)")
        }
        return identity
    }
}
