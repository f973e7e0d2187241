import SyncJournalProtocol

/// A stored record that no longer decodes as the type asked for (another client wrote a field
/// of another type, an older version of the app a field it no longer has, ...). It is kept
/// as it is; reading it as a ``StoreRecord`` shows its fields.
public struct UndecodableRecord: Sendable, Hashable, CustomStringConvertible {
    /// The record's kind and id.
    public let key: RecordKey
    /// Where decoding failed: the field and the path inside it, such as `address.city` or
    /// `scores[2]`; empty when the record as a whole does not decode.
    public let path: String
    /// Why, for people: `expected a string, found int64`.
    public let reason: String

    /// Makes a report; the store makes these.
    package init(key: RecordKey, path: String, reason: String) {
        self.key = key
        self.path = path
        self.reason = reason
    }

    /// `note/n1 at address.city: expected a string, found int64`.
    public var description: String {
        path.isEmpty ? "\(key): \(reason)" : "\(key) at \(path): \(reason)"
    }
}

/// A record that does not decode is also the error of reading it alone.
extension UndecodableRecord: Error {}
