#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncJournalPlatform
import SyncJournalProtocol

/// Finds which property a key path names, so queries can name fields by key path.
///
/// Swift gives no property name for a key path, so the probe decodes the model
/// from values of its own making, a different one for each property, reads the key
/// path on the result and sees whose value comes back. A `Bool` has only two values,
/// so there is one decoding per bit of the property count, and a property is known
/// by the pattern of its values across them. Only the model's own stored properties
/// of a scalar type are found this way (strings, numbers, booleans, UUIDs, dates,
/// attachments, and optionals of those).
package enum PropertyNameProbe {
    /// The property names found per key path, per model type.
    private static let cache = Mutex<[ObjectIdentifier: [AnyKeyPath: String]]>([:])

    /// The name of the property `keyPath` reads, or nil when the probe cannot tell.
    package static func name<Record: SyncRecord, Value: Encodable>(of keyPath: KeyPath<Record, Value>) -> String? {
        let type = ObjectIdentifier(Record.self)
        if let known = cache.withLock({ $0[type]?[keyPath] }) { return known }
        guard let name = probe(keyPath) else { return nil }
        cache.withLock { $0[type, default: [:]][keyPath] = name }
        return name
    }

    private static func probe<Record: SyncRecord, Value: Encodable>(_ keyPath: KeyPath<Record, Value>) -> String? {
        // The first round learns the property names; then one round per bit tells booleans apart.
        let names = ProbeLog()
        guard let first = try? Record(from: ProbeDecoder(round: 0, log: names)) else { return nil }
        let keys = names.keys
        let rounds = max(1, Int.bitWidth - (keys.count + 1).leadingZeroBitCount)
        var seen: [FieldValue] = []
        var given: [[FieldValue?]] = []
        for round in 0..<rounds {
            let log = round == 0 ? names : ProbeLog()
            let instance = round == 0 ? first : try? Record(from: ProbeDecoder(round: round, log: log))
            guard let instance, let value = try? FieldValueEncoder().encodeValue(instance[keyPath: keyPath]) else { return nil }
            seen.append(value)
            given.append(keys.map { log.values[$0] })
        }
        let matches = keys.indices.filter { index in given.indices.allSatisfy { given[$0][index] == seen[$0] } }
        guard matches.count == 1 else { return nil }
        return keys[matches[0]]
    }
}

/// The values a probe gave, by property name, and the order the names came in.
private final class ProbeLog {
    var keys: [String] = []
    var values: [String: FieldValue] = [:]

    /// The index of `key`, registering it on first sight.
    func index(of key: String) -> Int {
        if let at = keys.firstIndex(of: key) { return at }
        keys.append(key)
        return keys.count - 1
    }
}

/// A decoder that gives each top-level property a value of its own; nested values get plain ones.
private struct ProbeDecoder: Decoder {
    let round: Int
    let log: ProbeLog?
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedContainer<Key>(round: round, log: log, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { ProbeEmptyContainer(codingPath: codingPath) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValue(value: 0, round: round, codingPath: codingPath)
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let round: Int
    let log: ProbeLog?
    var codingPath: [any CodingKey]
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // Only the model's own properties are told apart; nested members get the plain value.
        guard let log else { return try ProbeSingleValue.make(type, value: 0, round: round, codingPath: codingPath + [key]) }
        let index = log.index(of: key.stringValue)
        let value = try ProbeSingleValue.make(type, value: index + 1, round: round, codingPath: codingPath + [key])
        // Opened to its own type, so a date or UUID encodes as the store's own kind of value.
        if let encodable = value as? any Encodable, let encoded = try? FieldValueEncoder().encodeValue(encodable) {
            log.values[key.stringValue] = encoded
        }
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(round: round, log: nil, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { ProbeEmptyContainer(codingPath: codingPath + [key]) }
    func superDecoder() throws -> any Decoder { ProbeDecoder(round: round, log: nil, codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(round: round, log: nil, codingPath: codingPath + [key]) }
}

/// Arrays, sets and dictionaries decode empty.
private struct ProbeEmptyContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey]
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }
    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "empty"))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "empty"))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
    mutating func superDecoder() throws -> any Decoder { ProbeDecoder(round: 0, log: nil, codingPath: codingPath) }
}

/// One value: `value` (a small positive number, or 0 for a nested member) as the type asked for.
private struct ProbeSingleValue: SingleValueDecodingContainer {
    let value: Int
    let round: Int
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Self.make(type, value: value, round: round, codingPath: codingPath) }

    /// `value` as a `T`: scalars directly, a boolean as the bit of `value` this round
    /// looks at, a case-iterable enum as its first case, anything else decoded from plain values.
    static func make<T: Decodable>(_ type: T.Type, value: Int, round: Int, codingPath: [any CodingKey]) throws -> T {
        let made: Any?
        switch type {
        case is String.Type: made = "\u{1}probe \(value)"
        case is Bool.Type: made = (value >> round) & 1 == 1
        case is Int.Type: made = value
        case is Int8.Type: made = Int8(truncatingIfNeeded: value)
        case is Int16.Type: made = Int16(truncatingIfNeeded: value)
        case is Int32.Type: made = Int32(truncatingIfNeeded: value)
        case is Int64.Type: made = Int64(value)
        case is UInt.Type: made = UInt(value)
        case is UInt8.Type: made = UInt8(truncatingIfNeeded: value)
        case is UInt16.Type: made = UInt16(truncatingIfNeeded: value)
        case is UInt32.Type: made = UInt32(truncatingIfNeeded: value)
        case is UInt64.Type: made = UInt64(value)
        case is Double.Type: made = Double(value) + 0.5
        case is Float.Type: made = Float(value) + 0.5
        case is Date.Type: made = Date(timeIntervalSince1970: Double(value) * 86_400)
        case is UUID.Type: made = UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)))
        // Told apart by size: its own decoding reads a hash and would refuse the probe's strings.
        case is Attachment.Type: made = Attachment(content: ContentHash(bytes: Array(repeating: 0, count: 32))!, size: Int64(value))
        default:
            if let cases = type as? any CaseIterable.Type, let first = firstCase(cases) as? T { return first }
            return try T(from: ProbeDecoder(round: round, log: nil, codingPath: codingPath))
        }
        guard let result = made as? T else {
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "probe"))
        }
        return result
    }

    private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
}
