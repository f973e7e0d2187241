import SyncJournalCore
import SyncJournalFieldCodec
import SyncJournalProtocol

/// One local edit as it is stored in the journal (`journals/FORMAT.md`, "Operation").
///
/// ```swift
/// let op = JournalOperation(id: .random(), kind: .update, entity: "pin", recordID: "p1",
///                           fields: ["name": .string("Museum")], baseUpdatedAt: 1_735_689_600_000,
///                           queuedAt: 1_735_689_700_000)
/// let bytes = op.encoded()
/// let back = try JournalOperation.decode(bytes)
/// ```
public struct JournalOperation: Sendable, Hashable {
    /// The operation's idempotency key.
    public var id: OperationID
    /// The entity kind (the server's table), non-empty.
    public var entity: String
    /// The record's id, 1 to 64 UTF-8 bytes.
    public var recordID: String
    /// All fields (create), the changed fields (update), none (delete).
    public var fields: [String: FieldValue]
    /// When the edit was made, in milliseconds since the epoch (never used as a base).
    public var queuedAt: Int64
    /// The server stamp of the copy the device edited; `nil` for a record the server has not confirmed.
    public var baseUpdatedAt: Int64?
    // The optional stamp, the one-byte kind and the two-byte model version
    // come last and pack together: an operation takes 76 bytes instead of
    // 96, and a queue holds 100,000.
    /// Create, update or delete.
    public var kind: OperationKind
    // The model version in two bytes (0: not stated), so a queued
    // operation's place in the outbox stays 80 bytes.
    private var storedModelVersion: UInt16

    /// The model version (`SyncRecord.schemaVersion`) of the app that made
    /// the edit, 1 to ``ProtocolLimits/maximumModelVersion``; `nil` when not
    /// stated (untyped edits, and every operation journaled before versions
    /// were kept), which readers take as "unknown, 1". Merged edits carry the
    /// highest version of those merged. A value out of range is stored as
    /// `nil`: the store checks versions before it builds an operation.
    public var modelVersion: Int? {
        get { storedModelVersion == 0 ? nil : Int(storedModelVersion) }
        set { storedModelVersion = newValue.flatMap { ProtocolLimits.isValidModelVersion($0) ? UInt16($0) : nil } ?? 0 }
    }

    /// The longest record id, in UTF-8 bytes.
    package static let maximumRecordIDLength = ProtocolLimits.maximumRecordIDBytes

    /// Creates an operation value.
    package init(id: OperationID, kind: OperationKind, entity: String, recordID: String,
                fields: [String: FieldValue] = [:], baseUpdatedAt: Int64? = nil, queuedAt: Int64, modelVersion: Int? = nil) {
        self.id = id
        self.kind = kind
        self.entity = entity
        self.recordID = recordID
        self.fields = fields
        self.baseUpdatedAt = baseUpdatedAt
        self.queuedAt = queuedAt
        self.storedModelVersion = 0
        self.modelVersion = modelVersion
    }

    /// The higher of two model versions, `nil` only when neither is stated:
    /// what an edit merged from both carries.
    package static func highestModelVersion(_ first: Int?, _ second: Int?) -> Int? {
        StorageRules.highestModelVersion(first, second)
    }

    /// Presence bit 0: a base stamp follows.
    static let baseFollows: UInt8 = 1
    /// Presence bit 1 (format 2.3): a model version follows, after the
    /// queued time. An operation without one is written as before 2.3.
    static let modelVersionFollows: UInt8 = 2

    /// Appends the operation's encoding.
    package func encode(into writer: inout ByteWriter) {
        id.encode(into: &writer)
        writer.writeUInt8(kind.code)
        writer.writeString(entity)
        writer.writeString(recordID)
        writer.writeUInt8((baseUpdatedAt == nil ? 0 : Self.baseFollows) | (storedModelVersion == 0 ? 0 : Self.modelVersionFollows))
        if let base = baseUpdatedAt { writer.writeZigzag(base) }
        writer.writeZigzag(queuedAt)
        if storedModelVersion != 0 { writer.writeVarint(UInt64(storedModelVersion)) }
        FieldListCodec.encode(fields, into: &writer)
    }

    /// The bytes ``encode(into:)`` appends, counted without writing them.
    package var encodedLength: Int {
        var length = 16 + 1 + EncodedLength.string(entity) + EncodedLength.string(recordID) + 1
        if let base = baseUpdatedAt { length += EncodedLength.zigzag(base) }
        length += EncodedLength.zigzag(queuedAt)
        if storedModelVersion != 0 { length += EncodedLength.varint(UInt64(storedModelVersion)) }
        return length + FieldListCodec.encodedLength(fields)
    }

    /// The payload of an ``RecordType/operation`` record.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 128)
        encode(into: &writer)
        return writer.bytes
    }

    /// Reads one operation.
    package static func decode(from reader: inout ByteReader) throws(ByteReader.Failure) -> JournalOperation {
        var operation = try decodeAllButFields(from: &reader)
        operation.fields = try FieldListCodec.decode(from: &reader)
        return operation
    }

    /// Reads one operation up to its field list (left unread; the value's fields are empty).
    package static func decodeAllButFields(from reader: inout ByteReader) throws(ByteReader.Failure) -> JournalOperation {
        let id = try OperationID.decode(from: &reader)
        let kindAt = reader.position
        guard let kind = OperationKind(code: try reader.readUInt8()) else { throw .invalid("unknown operation", at: kindAt) }
        let entityAt = reader.position
        let entity = try reader.readString()
        if entity.isEmpty { throw .invalid("empty entity kind", at: entityAt) }
        let idAt = reader.position
        let recordID = try reader.readString()
        if recordID.utf8.isEmpty || recordID.utf8.count > maximumRecordIDLength {
            throw .invalid("record id of \(recordID.utf8.count) bytes", at: idAt)
        }
        let presenceAt = reader.position
        let presence = try reader.readUInt8()
        if presence & ~(baseFollows | modelVersionFollows) != 0 { throw .invalid("unknown presence bits", at: presenceAt) }
        let base: Int64? = presence & baseFollows != 0 ? try reader.readZigzag() : nil
        let queuedAt = try reader.readZigzag()
        var modelVersion: Int?
        if presence & modelVersionFollows != 0 {
            let versionAt = reader.position
            let version = try reader.readVarint()
            guard version >= 1, version <= UInt64(ProtocolLimits.maximumModelVersion) else {
                throw .invalid("model version \(version), not 1 to \(ProtocolLimits.maximumModelVersion)", at: versionAt)
            }
            modelVersion = Int(version)
        }
        return JournalOperation(id: id, kind: kind, entity: entity, recordID: recordID, fields: [:],
                                baseUpdatedAt: base, queuedAt: queuedAt, modelVersion: modelVersion)
    }

    /// Decodes the payload of an ``RecordType/operation`` record.
    package static func decode(_ payload: [UInt8]) throws(ByteReader.Failure) -> JournalOperation {
        var reader = ByteReader(payload)
        let operation = try decode(from: &reader)
        try reader.expectEnd()
        return operation
    }

    /// The payload of an ``RecordType/operationBatch`` record.
    package static func encodeBatch(_ operations: [JournalOperation]) -> [UInt8] {
        var writer = ByteWriter(capacity: 128 * operations.count)
        writer.writeVarint(UInt64(operations.count))
        for operation in operations { operation.encode(into: &writer) }
        return writer.bytes
    }

    /// Decodes the payload of an ``RecordType/operationBatch`` record (at least one operation).
    package static func decodeBatch(_ payload: [UInt8]) throws(ByteReader.Failure) -> [JournalOperation] {
        var reader = ByteReader(payload)
        let count = try reader.readCount(minimumItemSize: 22)
        if count == 0 { throw .invalid("empty batch", at: 0) }
        var operations: [JournalOperation] = []
        operations.reserveCapacity(count)
        for _ in 0..<count { operations.append(try decode(from: &reader)) }
        try reader.expectEnd()
        return operations
    }
}
