import SyncJournalProtocol

/// Typed, path-aware access to the members of one object of a message,
/// refusing members the message does not define.
struct JSONObjectReader {
    let members: [String: JSONValue]
    let path: String

    /// Reads `value` at `path` as an object whose members are all among `allowed`.
    init(_ value: JSONValue, at path: String, allowed: Set<String>) throws(WireError) {
        guard case .object(let members) = value else { throw .wrongType(path: path, expected: "an object") }
        // The smallest unknown name, so the error does not depend on hashing order.
        if let unknown = members.keys.filter({ !allowed.contains($0) }).min(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            throw .unknownMember(path: JSONPath.member(path, unknown))
        }
        self.members = members
        self.path = path
    }

    func path(of name: String) -> String { JSONPath.member(path, name) }

    func value(_ name: String) throws(WireError) -> JSONValue {
        guard let value = members[name] else { throw .missingMember(path: path(of: name)) }
        return value
    }

    func string(_ name: String) throws(WireError) -> String {
        guard case .string(let text) = try value(name) else { throw .wrongType(path: path(of: name), expected: "a string") }
        return text
    }

    /// A string of 1 to `maximumBytes` UTF-8 bytes.
    func name(_ name: String, maximumBytes: Int = .max) throws(WireError) -> String {
        let text = try string(name)
        let count = text.utf8.count
        if count == 0 { throw .invalidValue(path: path(of: name), reason: "empty") }
        if count > maximumBytes { throw .invalidValue(path: path(of: name), reason: "\(count) UTF-8 bytes, at most \(maximumBytes)") }
        return text
    }

    func int64(_ name: String) throws(WireError) -> Int64 {
        guard case .integer(let number) = try value(name) else { throw .wrongType(path: path(of: name), expected: "an integer") }
        return number
    }

    /// A member that may be left out, and is an integer when given.
    func absentOrInt64(_ name: String) throws(WireError) -> Int64? {
        guard members[name] != nil else { return nil }
        return try int64(name)
    }

    /// A member that may be left out, and is a model version (an integer, 1
    /// to ``ProtocolLimits/maximumModelVersion``) when given.
    func absentOrModelVersion(_ name: String) throws(WireError) -> Int? {
        guard let number = try absentOrInt64(name) else { return nil }
        guard number >= 1, number <= Int64(ProtocolLimits.maximumModelVersion) else {
            throw .invalidValue(path: path(of: name), reason: "\(number) is not a model version (1 to \(ProtocolLimits.maximumModelVersion))")
        }
        return Int(number)
    }

    /// A member that must be present and is an integer or `null`.
    func optionalInt64(_ name: String) throws(WireError) -> Int64? {
        switch try value(name) {
        case .null: return nil
        case .integer(let number): return number
        default: throw .wrongType(path: path(of: name), expected: "an integer or null")
        }
    }

    func bool(_ name: String) throws(WireError) -> Bool {
        guard case .bool(let flag) = try value(name) else { throw .wrongType(path: path(of: name), expected: "a boolean") }
        return flag
    }

    func array(_ name: String) throws(WireError) -> [JSONValue] {
        guard case .array(let items) = try value(name) else { throw .wrongType(path: path(of: name), expected: "an array") }
        return items
    }

    func object(_ name: String) throws(WireError) -> [String: JSONValue] {
        guard case .object(let members) = try value(name) else { throw .wrongType(path: path(of: name), expected: "an object") }
        return members
    }
}

extension JSONObjectReader {
    /// Parses a message body, whose top level must be an object with members among `allowed`.
    static func body(_ bytes: some Collection<UInt8>, parser: JSONParser, allowed: Set<String>) throws(WireError) -> JSONObjectReader {
        try JSONObjectReader(try parser.parse(bytes), at: JSONPath.root, allowed: allowed)
    }
}
