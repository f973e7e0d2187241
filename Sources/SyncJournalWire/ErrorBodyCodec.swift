/// The JSON of an ``ErrorBody``.
///
/// ```swift
/// let body = ErrorBodyCodec.encode(ErrorBody(code: .badCursor, message: "\"abc\" is not a cursor"))
/// let error = try ErrorBodyCodec.decode(body)
/// ```
public enum ErrorBodyCodec {
    /// The reply body; `kinds` is written only when given.
    public static func encode(_ error: ErrorBody) -> [UInt8] {
        var members: [String: JSONValue] = ["error": .string(error.code.rawValue), "message": .string(error.message)]
        if let kinds = error.kinds { members["kinds"] = .array(kinds.map { .string($0) }) }
        return JSONValue.object(members).encoded()
    }

    /// The error a reply body stands for; any code is kept, known or not.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ErrorBody {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: ["error", "message", "kinds"])
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
        return ErrorBody(code: ProtocolErrorCode(rawValue: code), message: message, kinds: kinds)
    }
}
