import SyncJournalProtocol

/// The members of an object (or the fields of a record) as a type encodes them.
struct FieldKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let codingPath: [any CodingKey]
    let slot: EncodedSlot

    private func put(_ value: FieldValue, _ key: Key) { slot.members![key.stringValue] = EncodedSlot(value) }

    func encodeNil(forKey key: Key) throws { put(.null, key) }
    func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
    func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    func encode(_ value: UInt, forKey key: Key) throws { put(try FieldValueEncoding.integer(value, at: codingPath + [key]), key) }
    func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    func encode(_ value: UInt64, forKey key: Key) throws { put(try FieldValueEncoding.integer(value, at: codingPath + [key]), key) }

    func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        put(try FieldValueEncoding.box(value, at: codingPath + [key]), key)
    }

    // An absent optional is written as null, so clearing a field is an edit of that field.
    func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: String?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key) }
    func encodeIfPresent<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        try value.map { try encode($0, forKey: key) } ?? encodeNil(forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodedSlot()
        slot.members![key.stringValue] = child
        return KeyedEncodingContainer(FieldKeyedEncodingContainer<NestedKey>(codingPath: codingPath + [key], slot: child.keyed()))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodedSlot()
        slot.members![key.stringValue] = child
        return FieldUnkeyedEncodingContainer(codingPath: codingPath + [key], slot: child.unkeyed())
    }

    func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    func superEncoder(forKey key: Key) -> any Encoder {
        let child = EncodedSlot()
        slot.members![key.stringValue] = child
        return FieldValueEncoding(codingPath: codingPath + [key], slot: child)
    }
}
