import SyncJournalCore
import SyncJournalProtocol

extension OutboxOperation {
    /// Appends the entry's encoding: the operation, flags, attempts, the
    /// last error, and (1.1) the permanent failures, last failure kind and
    /// quarantine. Entries without 1.1 state encode as in 1.0.
    package func encode(into writer: inout ByteWriter) {
        operation.encode(into: &writer)
        let extended = permanentFailures > 0 || lastFailure != nil
        writer.writeUInt8((sent ? 1 : 0) | (lastError == nil ? 0 : 2) | (quarantined ? 4 : 0) | (extended ? 8 : 0))
        writer.writeVarint(UInt64(attempts))
        if let lastError { writer.writeString(lastError) }
        if extended {
            writer.writeVarint(UInt64(permanentFailures))
            writer.writeUInt8(lastFailure.map { $0.code + 1 } ?? 0)
        }
    }

    /// Reads one entry.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> OutboxOperation {
        let operation = try JournalOperation.decode(from: &reader)
        let flagsAt = reader.position
        let flags = try reader.readUInt8()
        if flags & ~15 != 0 { throw .invalid("unknown outbox flags", at: flagsAt) }
        let attempts = try reader.readVarint()
        if attempts > UInt64(Int32.max) { throw .invalid("attempts \(attempts)", at: flagsAt + 1) }
        let lastError: String? = flags & 2 != 0 ? try reader.readString() : nil
        var permanentFailures: UInt64 = 0
        var lastFailure: FailureKind?
        if flags & 8 != 0 {
            let countAt = reader.position
            permanentFailures = try reader.readVarint()
            if permanentFailures > UInt64(Int32.max) { throw .invalid("permanent failures \(permanentFailures)", at: countAt) }
            let kindAt = reader.position
            let kind = try reader.readUInt8()
            if kind > 0 {
                guard let value = FailureKind(code: kind - 1) else { throw .invalid("unknown failure kind", at: kindAt) }
                lastFailure = value
            }
        }
        return OutboxOperation(operation: operation, sent: flags & 1 != 0, attempts: Int(attempts), lastError: lastError,
                               permanentFailures: Int(permanentFailures), lastFailure: lastFailure, quarantined: flags & 4 != 0)
    }
}

extension CheckpointPart {
    /// Appends the part's encoding: a tag byte and its content.
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .rows(let rows):
            writer.writeUInt8(1)
            writer.writeVarint(UInt64(rows.count))
            for row in rows { row.encode(into: &writer) }
        case .outbox(let operations):
            writer.writeUInt8(2)
            writer.writeVarint(UInt64(operations.count))
            for operation in operations { operation.encode(into: &writer) }
        case .cursors(let cursors):
            writer.writeUInt8(3)
            Self.encode(cursors, into: &writer)
        case .spaceCursors(let space, let cursors):
            writer.writeUInt8(9)
            space.encodeShared(into: &writer)
            Self.encode(cursors, into: &writer)
        case .spaces(let spaces):
            writer.writeUInt8(10)
            writer.writeVarint(UInt64(spaces.count))
            for space in spaces { space.encode(into: &writer) }
        case .conflicts(let conflicts):
            writer.writeUInt8(6)
            writer.writeVarint(UInt64(conflicts.count))
            for conflict in conflicts {
                conflict.operation.encode(into: &writer)
                writer.writeUInt8((conflict.server == nil ? 0 : 1) | (conflict.baseRow == nil ? 0 : 2))
                conflict.server?.encode(into: &writer)
                conflict.baseRow?.encode(into: &writer)
                conflict.resolution.encode(into: &writer)
            }
        case .baseRows(let rows):
            writer.writeUInt8(7)
            writer.writeVarint(UInt64(rows.count))
            for row in rows { row.encode(into: &writer) }
        case .rejections(let rejections):
            writer.writeUInt8(5)
            writer.writeVarint(UInt64(rejections.count))
            for rejection in rejections {
                rejection.operation.encode(into: &writer)
                writer.writeString(rejection.reason)
                writer.writeVarint(UInt64(rejection.attempts))
            }
        case .server(let known):
            writer.writeUInt8(8)
            known.encode(into: &writer)
        case .end(let rows, let operations, let conflicts, let rejections):
            writer.writeUInt8(0xFF)
            for count in [rows, operations, conflicts, rejections] { writer.writeVarint(UInt64(count)) }
        }
    }

    /// Writes cursors by kind, each kind once, in byte order (parts 3 and 9).
    private static func encode(_ cursors: [String: PullCursor], into writer: inout ByteWriter) {
        let kinds = cursors.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        writer.writeVarint(UInt64(kinds.count))
        for kind in kinds {
            writer.writeString(kind)
            cursors[kind]!.encode(into: &writer)
        }
    }

    /// Reads cursors by kind (for a repeated kind the last one wins).
    private static func decodeCursors(from reader: inout ByteReader) throws(ByteReader.Failure) -> [String: PullCursor] {
        let count = try reader.readCount(minimumItemSize: 3)
        var cursors: [String: PullCursor] = [:]
        for _ in 0..<count {
            let kind = try reader.readString()
            cursors[kind] = try PullCursor.decode(from: &reader)
        }
        return cursors
    }

    /// Reads one part.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> CheckpointPart {
        let at = reader.position
        switch try reader.readUInt8() {
        case 1:
            let count = try reader.readCount(minimumItemSize: 5)
            var rows: [ServerRow] = []
            for _ in 0..<count { rows.append(try ServerRow.decode(from: &reader)) }
            return .rows(rows)
        case 2:
            let count = try reader.readCount(minimumItemSize: 24)
            var operations: [OutboxOperation] = []
            for _ in 0..<count { operations.append(try OutboxOperation.decode(from: &reader)) }
            return .outbox(operations)
        case 3:
            return .cursors(try decodeCursors(from: &reader))
        case 9:
            let space = try SpaceID.decodeShared(from: &reader)
            return .spaceCursors(space, try decodeCursors(from: &reader))
        case 10:
            // A description takes at least 20 bytes: its id, an empty name, a role, a version and no members.
            let count = try reader.readCount(minimumItemSize: 20)
            var spaces: [Space] = []
            for _ in 0..<count { spaces.append(try Space.decode(from: &reader)) }
            return .spaces(spaces)
        case 4:
            let count = try reader.readCount(minimumItemSize: 23)
            var conflicts: [ConflictRecord] = []
            for _ in 0..<count {
                let operation = try JournalOperation.decode(from: &reader)
                let flag = try reader.readUInt8()
                conflicts.append(ConflictRecord(operation: operation, server: flag == 1 ? try ServerRow.decode(from: &reader) : nil))
            }
            return .conflicts(conflicts)
        case 6:
            let count = try reader.readCount(minimumItemSize: 26)
            var conflicts: [ConflictRecord] = []
            for _ in 0..<count {
                let operation = try JournalOperation.decode(from: &reader)
                let flagsAt = reader.position
                let flags = try reader.readUInt8()
                if flags & ~3 != 0 { throw .invalid("unknown conflict flags", at: flagsAt) }
                let server = flags & 1 != 0 ? try ServerRow.decode(from: &reader) : nil
                let base = flags & 2 != 0 ? try ServerRow.decode(from: &reader) : nil
                conflicts.append(ConflictRecord(operation: operation, server: server, baseRow: base,
                                                resolution: try ConflictResolution.decode(from: &reader)))
            }
            return .conflicts(conflicts)
        case 7:
            let count = try reader.readCount(minimumItemSize: 5)
            var rows: [ServerRow] = []
            for _ in 0..<count { rows.append(try ServerRow.decode(from: &reader)) }
            return .baseRows(rows)
        case 8:
            return .server(try KnownServer.decode(from: &reader))
        case 5:
            let count = try reader.readCount(minimumItemSize: 24)
            var rejections: [RejectionRecord] = []
            for _ in 0..<count {
                let operation = try JournalOperation.decode(from: &reader)
                let reason = try reader.readString()
                let attempts = try reader.readVarint()
                rejections.append(RejectionRecord(operation: operation, reason: reason, attempts: Int(min(attempts, UInt64(Int32.max)))))
            }
            return .rejections(rejections)
        case 0xFF:
            var counts: [Int] = []
            for _ in 0..<4 {
                let value = try reader.readVarint()
                if value > UInt64(Int32.max) { throw .invalid("count \(value)", at: reader.position) }
                counts.append(Int(value))
            }
            return .end(rows: counts[0], operations: counts[1], conflicts: counts[2], rejections: counts[3])
        case let tag:
            throw .invalid("unknown checkpoint part \(tag)", at: at)
        }
    }
}
