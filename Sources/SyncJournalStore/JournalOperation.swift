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
    // The base stamp, the kind, the space and the model version come last
    // and pack together: the stamp without an optional's tag byte, the
    // kind (2 bits), whether a base is stated (1 bit) and the space's
    // handle (29 bits, `SpaceHandles`) in one word, the model version in
    // two bytes (0: not stated). An operation takes 78 bytes instead of
    // 112, its place in the outbox stays 80, and a queue holds 100,000.
    private var storedBase: Int64
    private var packed: UInt32
    private var storedModelVersion: UInt16

    private static let kindBits: UInt32 = 0b11
    private static let baseStatedBit: UInt32 = 0b100
    private static let spaceShift: UInt32 = 3

    /// The server stamp of the copy the device edited; `nil` for a record the server has not confirmed.
    public var baseUpdatedAt: Int64? {
        get { packed & Self.baseStatedBit != 0 ? storedBase : nil }
        set {
            storedBase = newValue ?? 0
            packed = newValue == nil ? packed & ~Self.baseStatedBit : packed | Self.baseStatedBit
        }
    }

    /// Create, update or delete.
    public var kind: OperationKind {
        get { OperationKind(code: UInt8(packed & Self.kindBits)) ?? .update }
        set { packed = packed & ~Self.kindBits | UInt32(newValue.code) }
    }

    /// The space of the record (the personal space unless the edit named another).
    public var space: SpaceID {
        get { SpaceHandles.space(for: packed >> Self.spaceShift) }
        set { packed = packed & (Self.kindBits | Self.baseStatedBit) | SpaceHandles.handle(for: newValue) << Self.spaceShift }
    }

    /// The model version (`SyncRecord.schemaVersion`) of the app that made
    /// the edit, 1 to 65,535; `nil` when not
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
                fields: [String: FieldValue] = [:], baseUpdatedAt: Int64? = nil, queuedAt: Int64, modelVersion: Int? = nil,
                space: SpaceID = .personal) {
        self.id = id
        self.entity = entity
        self.recordID = recordID
        self.fields = fields
        self.queuedAt = queuedAt
        self.storedBase = 0
        self.packed = 0
        self.storedModelVersion = 0
        self.kind = kind
        self.baseUpdatedAt = baseUpdatedAt
        self.modelVersion = modelVersion
        self.space = space
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
    /// Presence bit 2 (format 2.5): the record's shared space follows, after
    /// the model version. An operation in the personal space is written as
    /// before 2.5.
    static let spaceFollows: UInt8 = 4

    /// Appends the operation's encoding.
    package func encode(into writer: inout ByteWriter) {
        id.encode(into: &writer)
        writer.writeUInt8(kind.code)
        writer.writeString(entity)
        writer.writeString(recordID)
        let space = self.space
        writer.writeUInt8((baseUpdatedAt == nil ? 0 : Self.baseFollows) | (storedModelVersion == 0 ? 0 : Self.modelVersionFollows)
                          | (space.isPersonal ? 0 : Self.spaceFollows))
        if let base = baseUpdatedAt { writer.writeZigzag(base) }
        writer.writeZigzag(queuedAt)
        if storedModelVersion != 0 { writer.writeVarint(UInt64(storedModelVersion)) }
        if !space.isPersonal { space.encodeShared(into: &writer) }
        FieldListCodec.encode(fields, into: &writer)
    }

    /// The bytes ``encode(into:)`` appends, counted without writing them.
    package var encodedLength: Int {
        var length = 16 + 1 + EncodedLength.string(entity) + EncodedLength.string(recordID) + 1
        if let base = baseUpdatedAt { length += EncodedLength.zigzag(base) }
        length += EncodedLength.zigzag(queuedAt)
        if storedModelVersion != 0 { length += EncodedLength.varint(UInt64(storedModelVersion)) }
        if packed >> Self.spaceShift != 0 { length += 16 }
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
        if presence & ~(baseFollows | modelVersionFollows | spaceFollows) != 0 { throw .invalid("unknown presence bits", at: presenceAt) }
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
        let space: SpaceID = presence & spaceFollows != 0 ? try SpaceID.decodeShared(from: &reader) : .personal
        return JournalOperation(id: id, kind: kind, entity: entity, recordID: recordID, fields: [:],
                                baseUpdatedAt: base, queuedAt: queuedAt, modelVersion: modelVersion, space: space)
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
