import SyncJournalProtocol

/// One value as a type decodes it (an enum's raw value, a wrapper's wrapped value).
struct FieldSingleValueDecodingContainer: SingleValueDecodingContainer {
    let value: FieldValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try FieldValueDecoding.bool(value, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try FieldValueDecoding.string(value, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try FieldValueDecoding.double(value, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try FieldValueDecoding.double(value, at: codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try FieldValueDecoding.integer(value, as: type, at: codingPath) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try FieldValueDecoding.unbox(value, as: type, at: codingPath)
    }
}
