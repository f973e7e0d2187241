/// A stored note this version cannot decode (another client wrote a field
/// of another type), as the list reports it.
public struct UnreadableNote: Error, Sendable, Hashable {
    /// `note/ID at FIELD: reason`.
    public var report: String

    /// A report of one note.
    public init(report: String) {
        self.report = report
    }
}
