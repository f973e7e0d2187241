import SyncJournalCore
import SyncJournalProtocol

/// One change the compactor makes to the queue. Steps are journaled with the
/// edit that caused them, so replay reaches the same queue without re-deciding.
package enum CompactionStep: Sendable, Hashable {
    /// The operation leaves the queue.
    case remove(OperationID)
    /// The operation is replaced, in place, by a merged one.
    case replace(OperationID, with: JournalOperation)

    /// Appends the step's encoding: tag 1 and an id, or tag 2, an id and an operation.
    package func encode(into writer: inout ByteWriter) {
        switch self {
        case .remove(let id):
            writer.writeUInt8(1)
            id.encode(into: &writer)
        case .replace(let id, let operation):
            writer.writeUInt8(2)
            id.encode(into: &writer)
            operation.encode(into: &writer)
        }
    }

    /// The bytes ``encode(into:)`` appends, counted without writing them.
    package var encodedLength: Int {
        switch self {
        case .remove: return 1 + 16
        case .replace(_, let operation): return 1 + 16 + operation.encodedLength
        }
    }

    /// Reads one step.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> CompactionStep {
        let at = reader.position
        switch try reader.readUInt8() {
        case 1: return .remove(try OperationID.decode(from: &reader))
        case 2:
            let id = try OperationID.decode(from: &reader)
            return .replace(id, with: try JournalOperation.decode(from: &reader))
        case let tag: throw .invalid("unknown compaction step \(tag)", at: at)
        }
    }
}
