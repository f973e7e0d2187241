/// A type that can be a ``SyncRecord``'s id: it converts to and from the record id string the
/// journal and the server use. `String` and `UUID` conform.
public protocol SyncRecordID: Hashable, Sendable, Codable {
    /// The record id string for this id (1 to 64 UTF-8 bytes).
    var recordIDString: String { get }

    /// The id a record id string stands for, or nil when the string is not one.
    init?(recordIDString: String)
}
