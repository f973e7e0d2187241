import SyncJournalProtocol

/// The elements of an array as a type decodes them, one after another.
struct FieldUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let elements: [FieldValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [FieldValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var path: [any CodingKey] { codingPath + [FieldCodingKey.index(currentIndex)] }

    /// The next element, moving past it.
    private mutating func next(_ type: Any.Type) throws -> (FieldValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "the array has only \(elements.count) elements"))
        }
        let found = (elements[currentIndex], path)
        currentIndex += 1
        return found
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (value, at) = try next(type)
        return try FieldValueDecoding.bool(value, at: at)
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let (value, at) = try next(type)
        return try FieldValueDecoding.string(value, at: at)
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let (value, at) = try next(type)
        return try FieldValueDecoding.double(value, at: at)
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let (value, at) = try next(type)
        return Float(try FieldValueDecoding.double(value, at: at))
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type) }

    private mutating func decodeInteger<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
        let (value, at) = try next(type)
        return try FieldValueDecoding.integer(value, as: type, at: at)
    }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        let (value, at) = try next(type)
        return try FieldValueDecoding.unbox(value, as: type, at: at)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, at) = try next([String: FieldValue].self)
        return try FieldValueDecoding(value: value, codingPath: at).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, at) = try next([FieldValue].self)
        return try FieldValueDecoding(value: value, codingPath: at).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, at) = try next(FieldValue.self)
        return FieldValueDecoding(value: value, codingPath: at)
    }
}
