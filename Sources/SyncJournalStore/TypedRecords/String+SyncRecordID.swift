/// A string is its own record id.
extension String: SyncRecordID {
    /// The string itself.
    public var recordIDString: String { self }

    /// The string itself.
    public init?(recordIDString: String) { self = recordIDString }
}
