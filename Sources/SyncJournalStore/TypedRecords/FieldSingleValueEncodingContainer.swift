import SyncJournalProtocol

/// One value as a type encodes it (an enum's raw value, a wrapper's wrapped value).
struct FieldSingleValueEncodingContainer: SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    let slot: EncodedSlot

    private func put(_ value: FieldValue) { slot.single = value }

    func encodeNil() throws { put(.null) }
    func encode(_ value: Bool) throws { put(.bool(value)) }
    func encode(_ value: String) throws { put(.string(value)) }
    func encode(_ value: Double) throws { put(.double(value)) }
    func encode(_ value: Float) throws { put(.double(Double(value))) }
    func encode(_ value: Int) throws { put(.int(Int64(value))) }
    func encode(_ value: Int8) throws { put(.int(Int64(value))) }
    func encode(_ value: Int16) throws { put(.int(Int64(value))) }
    func encode(_ value: Int32) throws { put(.int(Int64(value))) }
    func encode(_ value: Int64) throws { put(.int(value)) }
    func encode(_ value: UInt) throws { put(try FieldValueEncoding.integer(value, at: codingPath)) }
    func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
    func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
    func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
    func encode(_ value: UInt64) throws { put(try FieldValueEncoding.integer(value, at: codingPath)) }

    func encode<Value: Encodable>(_ value: Value) throws {
        // A single value sits at its container's level, so it adds no depth.
        put(try FieldValueEncoding.box(value, at: codingPath))
    }
}
