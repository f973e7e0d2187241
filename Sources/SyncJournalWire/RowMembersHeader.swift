/// The request header `Sync-Row-Members`, by which a client says which
/// optional row members it reads (journals/PROTOCOL.md, "Model versions"):
/// a comma-separated list of member names. A server writes an optional
/// member only for a client that names it, since an older client would
/// refuse a whole reply holding a member it does not know.
///
/// ```swift
/// RowMembersHeader.value(naming: [RowMembersHeader.modelVersion, RowMembersHeader.space])   // "modelVersion, space"
/// RowMembersHeader.members(in: ["modelVersion ,space"])                                     // ["modelVersion", "space"]
/// ```
package enum RowMembersHeader {
    /// The header's name.
    package static let name = "Sync-Row-Members"
    /// A row's `modelVersion` (journals/PROTOCOL.md, "Model versions").
    package static let modelVersion = "modelVersion"
    /// A row's `space`: a request that names a shared space must carry it,
    /// and a client without it is never sent a row of a shared space
    /// (journals/PROTOCOL.md, "Membership").
    package static let space = "space"

    /// The header's value naming `members`, in the order given.
    package static func value(naming members: [String]) -> String {
        members.joined(separator: ", ")
    }

    /// The members the header's values (it may be given more than once)
    /// name, without the spaces and tabs around each.
    package static func members(in values: [String]) -> Set<String> {
        var members: Set<String> = []
        for value in values {
            for item in value.split(separator: ",") {
                var name = Substring(item)
                while let first = name.first, first == " " || first == "\t" { name.removeFirst() }
                while let last = name.last, last == " " || last == "\t" { name.removeLast() }
                if !name.isEmpty { members.insert(String(name)) }
            }
        }
        return members
    }
}
