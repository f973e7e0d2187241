import SyncJournalProtocol

/// The elements of an array as a type encodes them.
struct FieldUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let codingPath: [any CodingKey]
    let slot: EncodedSlot

    var count: Int { slot.elements!.count }

    private var nextPath: [any CodingKey] { codingPath + [FieldCodingKey.index(count)] }
    private func append(_ value: FieldValue) { slot.elements!.append(EncodedSlot(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(try FieldValueEncoding.integer(value, at: nextPath)) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(try FieldValueEncoding.integer(value, at: nextPath)) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        append(try FieldValueEncoding.box(value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodedSlot()
        let path = nextPath
        slot.elements!.append(child)
        return KeyedEncodingContainer(FieldKeyedEncodingContainer<NestedKey>(codingPath: path, slot: child.keyed()))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodedSlot()
        let path = nextPath
        slot.elements!.append(child)
        return FieldUnkeyedEncodingContainer(codingPath: path, slot: child.unkeyed())
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodedSlot()
        let path = nextPath
        slot.elements!.append(child)
        return FieldValueEncoding(codingPath: path, slot: child)
    }
}
