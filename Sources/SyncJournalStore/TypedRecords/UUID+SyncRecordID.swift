#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A UUID's record id is its lowercase 8-4-4-4-12 text.
extension UUID: SyncRecordID {
    /// The UUID in lowercase hex, `"ce56971c-de35-4897-821e-fc0b1046c8bf"`.
    public var recordIDString: String { uuidString.lowercased() }

    /// The UUID the text spells, in either case; nil for other text.
    public init?(recordIDString: String) { self.init(uuidString: recordIDString) }
}
