/// One statement parameter, sent to the server in binary with its type, so
/// user data never becomes part of the SQL text.
///
/// ```swift
/// try connection.execute("select fields from rows where kind = $1 and id = $2", [.text("pin"), .text("p1")])
/// ```
public enum PostgreSQLValue: Sendable, Hashable {
    /// An `int8` (`bigint`), or SQL null.
    case int64(Int64?)
    /// A `text`, or SQL null.
    case text(String?)
    /// A `bytea`.
    case bytes([UInt8])

    /// The type's OID (`pg_type`): int8 20, text 25, bytea 17.
    var typeOID: UInt32 {
        switch self {
        case .int64: return 20
        case .text: return 25
        case .bytes: return 17
        }
    }

    /// The binary send format: int8 big-endian, text as UTF-8, bytea as is; `nil` for null.
    var binary: [UInt8]? {
        switch self {
        case .int64(let value):
            guard let value else { return nil }
            return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .text(let value):
            return value.map { Array($0.utf8) }
        case .bytes(let value):
            return value
        }
    }
}
