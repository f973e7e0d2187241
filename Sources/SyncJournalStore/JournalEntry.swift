import SyncJournalProtocol
import SyncJournalCore

/// A journal record decoded into what the store layer knows of it.
package enum JournalEntry: Sendable, Hashable {
    /// One operation.
    case operation(JournalOperation)
    /// Operations appended together.
    case batch([JournalOperation])
    /// A record salvage copied from after damage (core type `0x8F01`).
    case salvaged(originalOffset: UInt64, originalSequence: UInt64, originalType: RecordType, payload: [UInt8])
    /// A type reserved for a later layer, or a skippable type this version does not know.
    case opaque(RecordType)

    /// Why a record could not be decoded.
    package enum DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The payload does not follow the type's encoding (a writer bug: the checksum verified).
        case malformed(sequence: UInt64, offset: Int64, type: RecordType, ByteReader.Failure)
        /// A type this version does not know and may not skip.
        case unsupportedType(sequence: UInt64, offset: Int64, type: RecordType)

        /// A one-line explanation.
        package var description: String {
            switch self {
            case .malformed(let sequence, let offset, let type, let failure):
                return "record \(sequence) at offset \(offset) (type \(type.name)): \(failure)"
            case .unsupportedType(let sequence, let offset, let type):
                return "record \(sequence) at offset \(offset) has type \(type), which this version does not know and may not skip"
            }
        }
    }

    /// Record types this version decodes.
    static let known: Set<RecordType> = [.operation, .operationBatch, .salvaged]

    /// Record types this version knows the meaning of, even if it does not decode them yet.
    static let reserved: Set<RecordType> = [.sentMarker, .sendWithdrawn, .acknowledgement, .rejection, .conflict, .compaction,
                                             .pulledRows, .pullCursors, .checkpoint]

    /// Decodes a verified record.
    package static func decode(_ record: JournalRecord) throws(DecodeError) -> JournalEntry {
        if !known.contains(record.type) {
            if reserved.contains(record.type) || record.type.isSkippable { return .opaque(record.type) }
            throw .unsupportedType(sequence: record.sequence, offset: record.offset, type: record.type)
        }
        do throws(ByteReader.Failure) {
            switch record.type {
            case .operation: return .operation(try JournalOperation.decode(record.payload))
            case .operationBatch: return .batch(try JournalOperation.decodeBatch(record.payload))
            case .salvaged:
                var reader = ByteReader(record.payload)
                let offset = try reader.readUInt64()
                let sequence = try reader.readUInt64()
                let type = RecordType(rawValue: try reader.readUInt16())
                let payload = try reader.readBytes()
                try reader.expectEnd()
                return .salvaged(originalOffset: offset, originalSequence: sequence, originalType: type, payload: payload)
            default:
                return .opaque(record.type)
            }
        } catch {
            throw .malformed(sequence: record.sequence, offset: record.offset, type: record.type, error)
        }
    }
}
