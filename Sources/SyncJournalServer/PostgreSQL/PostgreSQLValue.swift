/// One statement parameter, sent to the server in binary with its type, so
/// user data never becomes part of the SQL text.
///
/// The array cases carry a whole batch in one parameter, so one statement
/// (`… = any($1)`, `unnest($1, $2)`) reads or writes every row of a push.
///
/// ```swift
/// try connection.execute("select fields from rows where kind = $1 and id = $2", [.text("pin"), .text("p1")])
/// try connection.execute("select id from rows where id = any($1)", [.textArray(["p1", "p2"])])
/// ```
public enum PostgreSQLValue: Sendable, Hashable {
    /// An `int8` (`bigint`), or SQL null.
    case int64(Int64?)
    /// A `text`, or SQL null.
    case text(String?)
    /// A `bytea`.
    case bytes([UInt8])
    /// A one-dimensional `text[]`.
    case textArray([String])
    /// A one-dimensional `int8[]` whose elements may be null.
    case int64Array([Int64?])
    /// A one-dimensional `bytea[]`.
    case bytesArray([[UInt8]])

    /// The type's OID (`pg_type`): int8 20, text 25, bytea 17, text[] 1009, int8[] 1016, bytea[] 1001.
    var typeOID: UInt32 {
        switch self {
        case .int64: return 20
        case .text: return 25
        case .bytes: return 17
        case .textArray: return 1009
        case .int64Array: return 1016
        case .bytesArray: return 1001
        }
    }

    /// The binary send format: int8 big-endian, text as UTF-8, bytea as is,
    /// arrays in `array_recv`'s layout; `nil` for null.
    var binary: [UInt8]? {
        switch self {
        case .int64(let value):
            guard let value else { return nil }
            return Self.bigEndian(value)
        case .text(let value):
            return value.map { Array($0.utf8) }
        case .bytes(let value):
            return value
        case .textArray(let values):
            return Self.array(elementOID: 25, values.map { Array($0.utf8) })
        case .int64Array(let values):
            return Self.array(elementOID: 20, values.map { $0.map(Self.bigEndian) })
        case .bytesArray(let values):
            return Self.array(elementOID: 17, values)
        }
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// A one-dimensional array: dimensions, a has-nulls flag, the element
    /// type, the length and lower bound (1), then each element as its
    /// length (-1 for null) and bytes. An empty array has no dimensions.
    private static func array(elementOID: UInt32, _ elements: [[UInt8]?]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        bytes += bigEndian(Int32(elements.isEmpty ? 0 : 1))
        bytes += bigEndian(Int32(elements.contains(where: { $0 == nil }) ? 1 : 0))
        bytes += bigEndian(elementOID)
        guard !elements.isEmpty else { return bytes }
        bytes += bigEndian(Int32(elements.count))
        bytes += bigEndian(Int32(1))
        for element in elements {
            if let element {
                bytes += bigEndian(Int32(element.count))
                bytes += element
            } else {
                bytes += bigEndian(Int32(-1))
            }
        }
        return bytes
    }
}
