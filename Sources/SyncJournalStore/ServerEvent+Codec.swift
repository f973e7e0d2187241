import SyncJournalCore
import SyncJournalProtocol

extension ServerEvent {
    /// Appends the payload of a server record: a tag (1 learned, 2
    /// mismatched, 3 adopted), then its content (`journals/FORMAT.md`).
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .learned(let identity):
            writer.writeUInt8(1)
            writer.writeString(identity.text)
        case .mismatched(let mismatch):
            writer.writeUInt8(2)
            mismatch.encode(into: &writer)
        case .adopted(let identity, let seenStamp):
            writer.writeUInt8(3)
            writer.writeUInt8((identity == nil ? 0 : 1) | (seenStamp == nil ? 0 : 2))
            if let identity { writer.writeString(identity.text) }
            if let seenStamp { writer.writeZigzag(seenStamp) }
        }
    }

    /// Reads a server record's payload.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ServerEvent {
        let tagAt = reader.position
        switch try reader.readUInt8() {
        case 1: return .learned(try ServerIdentity.decode(from: &reader))
        case 2: return .mismatched(try ServerMismatch.decode(from: &reader))
        case 3:
            let flagsAt = reader.position
            let flags = try reader.readUInt8()
            if flags & ~3 != 0 { throw .invalid("unknown server flags", at: flagsAt) }
            let identity = flags & 1 != 0 ? try ServerIdentity.decode(from: &reader) : nil
            let seenStamp = flags & 2 != 0 ? try reader.readZigzag() : nil
            return .adopted(identity, seenStamp: seenStamp)
        default:
            throw .invalid("unknown server record tag", at: tagAt)
        }
    }
}

extension ServerIdentity {
    /// Reads an identity's text, refusing one that is not an identity.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ServerIdentity {
        let at = reader.position
        guard let identity = ServerIdentity(try reader.readString()) else { throw .invalid("not a server identity", at: at) }
        return identity
    }
}

extension ServerMismatch {
    /// Appends a mismatch: `u8` 1, expected and found identity; or `u8` 2,
    /// the identity, the seen stamp and the server's latest stamp.
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .differentServer(let expected, let found):
            writer.writeUInt8(1)
            writer.writeString(expected.text)
            writer.writeString(found.text)
        case .behind(let identity, let seenStamp, let latestStamp):
            writer.writeUInt8(2)
            writer.writeString(identity.text)
            writer.writeZigzag(seenStamp)
            writer.writeZigzag(latestStamp)
        }
    }

    /// Reads a mismatch.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ServerMismatch {
        let at = reader.position
        switch try reader.readUInt8() {
        case 1: return .differentServer(expected: try ServerIdentity.decode(from: &reader), found: try ServerIdentity.decode(from: &reader))
        case 2: return .behind(identity: try ServerIdentity.decode(from: &reader), seenStamp: try reader.readZigzag(),
                               latestStamp: try reader.readZigzag())
        default: throw .invalid("unknown server mismatch", at: at)
        }
    }
}

extension KnownServer {
    /// Appends checkpoint part 8's content: `u8` flags (bit 0 identity,
    /// bit 1 seen stamp, bit 2 mismatch), then each one present.
    package func encode(into writer: inout ByteWriter) {
        writer.writeUInt8((identity == nil ? 0 : 1) | (seenStamp == nil ? 0 : 2) | (mismatch == nil ? 0 : 4))
        if let identity { writer.writeString(identity.text) }
        if let seenStamp { writer.writeZigzag(seenStamp) }
        mismatch?.encode(into: &writer)
    }

    /// Reads checkpoint part 8's content.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> KnownServer {
        let flagsAt = reader.position
        let flags = try reader.readUInt8()
        if flags & ~7 != 0 { throw .invalid("unknown server flags", at: flagsAt) }
        let identity = flags & 1 != 0 ? try ServerIdentity.decode(from: &reader) : nil
        let seenStamp = flags & 2 != 0 ? try reader.readZigzag() : nil
        let mismatch = flags & 4 != 0 ? try ServerMismatch.decode(from: &reader) : nil
        return KnownServer(identity: identity, seenStamp: seenStamp, mismatch: mismatch)
    }
}

extension ReuploadPlan {
    /// Appends a re-uploads record's payload: `count` n and n operations,
    /// `count` m and m times an `opid` and its new base (`zigzag`), then
    /// `count` k and k pairs of `opid`s (an operation's old and new id).
    package func encode(into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(uploads.count))
        for upload in uploads { upload.encode(into: &writer) }
        writer.writeVarint(UInt64(rebases.count))
        for rebase in rebases {
            rebase.operationID.encode(into: &writer)
            writer.writeZigzag(rebase.base)
        }
        writer.writeVarint(UInt64(renames.count))
        for rename in renames {
            rename.from.encode(into: &writer)
            rename.to.encode(into: &writer)
        }
    }

    /// Reads a re-uploads record's payload.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> ReuploadPlan {
        let count = try reader.readCount(minimumItemSize: 22)
        var uploads: [JournalOperation] = []
        for _ in 0..<count { uploads.append(try JournalOperation.decode(from: &reader)) }
        let rebaseCount = try reader.readCount(minimumItemSize: 17)
        var rebases: [Rebase] = []
        for _ in 0..<rebaseCount {
            rebases.append(Rebase(operationID: try OperationID.decode(from: &reader), base: try reader.readZigzag()))
        }
        let renameCount = try reader.readCount(minimumItemSize: 32)
        var renames: [Rename] = []
        for _ in 0..<renameCount {
            renames.append(Rename(from: try OperationID.decode(from: &reader), to: try OperationID.decode(from: &reader)))
        }
        return ReuploadPlan(uploads: uploads, rebases: rebases, renames: renames)
    }
}
