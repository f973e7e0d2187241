import SyncJournalProtocol

/// The JSON of an ``ErrorBody``.
///
/// ```swift
/// let body = ErrorBodyCodec.encode(ErrorBody(code: .badCursor, message: "\"abc\" is not a cursor"))
/// let error = try ErrorBodyCodec.decode(body)
/// ```
public enum ErrorBodyCodec {
    static let members: Set<String> = ["error", "message", "kinds", "expected", "found", "seenStamp", "latestStamp",
                                       "spaceKinds", "space", "role", "user", "received"]

    /// The reply body; `kinds`, `spaceKinds`, the `server_mismatch` members
    /// and the membership refusal members are written only when given.
    public static func encode(_ error: ErrorBody) -> [UInt8] {
        var members: [String: JSONValue] = ["error": .string(error.code.rawValue), "message": .string(error.message)]
        if let kinds = error.kinds { members["kinds"] = .array(kinds.map { .string($0) }) }
        if let expected = error.expected { members["expected"] = .string(expected.text) }
        if let found = error.found { members["found"] = .string(found.text) }
        if let seenStamp = error.seenStamp { members["seenStamp"] = .integer(seenStamp) }
        if let latestStamp = error.latestStamp { members["latestStamp"] = .integer(latestStamp) }
        if let spaceKinds = error.spaceKinds {
            var spaces: [String: JSONValue] = [:]
            for (space, kinds) in spaceKinds {
                guard let id = space.text else { continue }
                spaces[id] = .array(kinds.map { .string($0) })
            }
            members["spaceKinds"] = .object(spaces)
        }
        if let space = error.space?.text { members["space"] = .string(space) }
        if let role = error.role { members["role"] = .string(role.rawValue) }
        if let user = error.user { members["user"] = .string(user) }
        if let received = error.received { members["received"] = .integer(received) }
        return JSONValue.object(members).encoded()
    }

    /// The error a reply body stands for; any code is kept, known or not.
    /// Every member but `error` and `message` may be left out.
    ///
    /// - Throws: ``WireError`` with the byte offset or JSON path of the problem.
    public static func decode(_ body: some Collection<UInt8>, parser: JSONParser = JSONParser()) throws(WireError) -> ErrorBody {
        let object = try JSONObjectReader.body(body, parser: parser, allowed: members)
        let code = try object.name("error")
        let message = try object.string("message")
        var kinds: [String]?
        if let list = object.members["kinds"] {
            kinds = try self.kinds(list, at: object.path(of: "kinds"))
        }
        var spaceKinds: [SpaceID: [String]]?
        if object.members["spaceKinds"] != nil {
            let path = object.path(of: "spaceKinds")
            var spaces: [SpaceID: [String]] = [:]
            for (key, list) in try object.object("spaceKinds") {
                let spacePath = JSONPath.member(path, key)
                spaces[try JSONObjectReader.spaceID(key, at: spacePath)] = try self.kinds(list, at: spacePath)
            }
            spaceKinds = spaces
        }
        return ErrorBody(code: ProtocolErrorCode(rawValue: code), message: message, kinds: kinds,
                         expected: try identity("expected", in: object), found: try identity("found", in: object),
                         seenStamp: try object.absentOrInt64("seenStamp"), latestStamp: try object.absentOrInt64("latestStamp"),
                         spaceKinds: spaceKinds,
                         space: object.members["space"] == nil ? nil : try object.spaceID("space"),
                         role: object.members["role"] == nil ? nil : try object.role("role"),
                         user: object.members["user"] == nil ? nil : try object.userName("user"),
                         received: try object.absentOrInt64("received"))
    }

    /// The array `json` (found at `path`) of non-empty kinds.
    private static func kinds(_ json: JSONValue, at path: String) throws(WireError) -> [String] {
        guard case .array(let items) = json else { throw .wrongType(path: path, expected: "an array") }
        var kinds: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let kind) = item, !kind.isEmpty else {
                throw .wrongType(path: JSONPath.element(path, index), expected: "a non-empty kind")
            }
            kinds.append(kind)
        }
        return kinds
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
