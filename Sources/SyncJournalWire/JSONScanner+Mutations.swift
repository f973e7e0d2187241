import SyncJournalProtocol

/// Pushed mutations read straight from the request's bytes (checked first
/// by ``JSONScanner/validateDocument()``), with the same results and errors
/// as ``MutationCodec/decode(_:at:)`` on the parsed body: each mutation's
/// small members go through a ``JSONObjectReader`` as before, and its fields,
/// which hold the bulk of a push, are read with ``JSONScanner/decodeFields(depth:path:)``.
extension JSONScanner {
    /// The members of the checked object at the position, by name, each
    /// with the offset of its value; the position is then past the object.
    /// Refuses a value that is not an object, and names outside `allowed`
    /// (the smallest such name), as ``JSONObjectReader`` does.
    mutating func objectMembers(at path: String, allowed: Set<String>) throws(WireError) -> [String: Int] {
        guard bytes[position] == UInt8(ascii: "{") else {
            _ = skipCheckedValue()
            throw .wrongType(path: path, expected: "an object")
        }
        let count = countElements()
        var members: [String: Int] = [:]
        members.reserveCapacity(count)
        for _ in 0..<count {
            skipWhitespace()
            let name = try parseString()
            skipSeparator()
            members[name] = position
            _ = skipCheckedValue()
            skipSeparator()
        }
        if count == 0 { skipSeparator() }
        if let unknown = members.keys.filter({ !allowed.contains($0) }).min(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            throw .unknownMember(path: JSONPath.member(path, unknown))
        }
        return members
    }

    /// The mutation at the position (found at `path`); the position is then past it.
    mutating func decodeMutation(at path: String) throws(WireError) -> Mutation {
        try decodeMutation(at: path) { (scanner: inout JSONScanner, fieldsPath: String) throws(WireError) in
            try scanner.decodeFields(depth: FieldValue.maximumNestingDepth, path: { fieldsPath })
        }
    }

    /// The mutation at the position (found at `path`), whose fields
    /// `readFields` reads from the position of the `fields` member (at the
    /// path it is given) when their turn comes; the position is then past it.
    mutating func decodeMutation(at path: String,
                                 fields readFields: (inout JSONScanner, String) throws(WireError) -> [String: FieldValue]) throws(WireError) -> Mutation {
        let members = try objectMembers(at: path, allowed: MutationCodec.members)
        let end = position
        // Members other than the fields are small when valid; one that is
        // an array or an object is wrong whatever it holds, so it stands
        // in as an empty one and is not built.
        var values: [String: JSONValue] = [:]
        values.reserveCapacity(members.count)
        for (name, offset) in members {
            position = offset
            switch bytes[offset] {
            case UInt8(ascii: "["): values[name] = .array([])
            case UInt8(ascii: "{"): values[name] = .object([:])
            default: values[name] = try parseValue(depth: 0)
            }
        }
        let object = try JSONObjectReader(.object(values), at: path, allowed: MutationCodec.members)
        let mutation = try MutationCodec.decode(object) { () throws(WireError) -> [String: FieldValue] in
            let fieldsPath = JSONPath.member(path, "fields")
            guard let offset = members["fields"] else { throw .missingMember(path: fieldsPath) }
            position = offset
            return try readFields(&self, fieldsPath)
        }
        position = end
        return mutation
    }
}
