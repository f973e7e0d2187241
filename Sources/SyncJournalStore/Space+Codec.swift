import SyncJournalCore
import SyncJournalProtocol

/// The journal's encoding of a shared space's description
/// (`journals/FORMAT.md`, "Store records", *2.5*).
extension Space {
    /// Appends the description: `uuid` id, `string` name, `u8` role,
    /// `zigzag` version, `count` n and n times a `string` user and a `u8` role.
    func encode(into writer: inout ByteWriter) {
        id.encodeShared(into: &writer)
        writer.writeString(name)
        writer.writeUInt8(role.code)
        writer.writeZigzag(version)
        writer.writeVarint(UInt64(members.count))
        for member in members {
            writer.writeString(member.user)
            writer.writeUInt8(member.role.code)
        }
    }

    /// Reads one description.
    static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> Space {
        let id = try SpaceID.decodeShared(from: &reader)
        let name = try reader.readString()
        let role = try SpaceRole.decode(from: &reader)
        let version = try reader.readZigzag()
        // A member takes at least two bytes: an empty name's length and a role.
        let count = try reader.readCount(minimumItemSize: 2)
        var members: [SpaceMember] = []
        members.reserveCapacity(count)
        for _ in 0..<count {
            let user = try reader.readString()
            members.append(SpaceMember(user: user, role: try SpaceRole.decode(from: &reader)))
        }
        return Space(id: id, name: name, role: role, members: members, version: version)
    }
}

extension SpaceRole {
    /// The role's code in journal records: 0 owner, 1 editor, 2 viewer.
    var code: UInt8 {
        switch self {
        case .owner: return 0
        case .editor: return 1
        case .viewer: return 2
        }
    }

    /// Reads a role's code; any other value is malformed.
    static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> SpaceRole {
        let at = reader.position
        switch try reader.readUInt8() {
        case 0: return .owner
        case 1: return .editor
        case 2: return .viewer
        default: throw .invalid("unknown space role", at: at)
        }
    }
}
