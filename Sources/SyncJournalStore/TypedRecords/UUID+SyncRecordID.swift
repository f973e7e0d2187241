#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A UUID's record id is its lowercase 8-4-4-4-12 text.
extension UUID: SyncRecordID {
    /// The UUID in lowercase hex, `"ce56971c-de35-4897-821e-fc0b1046c8bf"`.
    public var recordIDString: String { uuidString.lowercased() }

    /// The UUID the lowercase text spells; nil for any other text, uppercase included, so
    /// that a record's id and the id it decodes to are always the same string.
    public init?(recordIDString: String) {
        guard let uuid = UUID(uuidString: recordIDString), uuid.uuidString.lowercased() == recordIDString else { return nil }
        self = uuid
    }
}
