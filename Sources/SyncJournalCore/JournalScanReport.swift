/// The result of reading a whole journal.
package struct JournalScanReport: Sendable, Hashable {
    /// The file's header; `nil` when the header itself is damaged.
    package var header: JournalHeader?
    /// Clean, torn tail or corrupt.
    package var status: JournalStatus
    /// Number of valid records, in order, before any damage.
    package var recordCount: Int
    /// Valid records per type.
    package var recordsByType: [RecordType: Int]
    /// Bytes from the start of the file to the end of the last valid record.
    package var validBytes: Int64
    /// The file's size.
    package var fileBytes: Int64
    /// Zero bytes after the last record of a clean journal: space the writer
    /// preallocated ahead of its appends (`journals/FORMAT.md`, section 3).
    /// Always 0 for a damaged journal.
    package var preallocatedBytes: Int64 = 0
    /// Bytes compared or checksummed while searching for records after
    /// damage (either format); lets tests check that the search stays linear.
    package var searchWork = 0
    /// Sequence number of the last valid record, `nil` when there is none.
    package var lastSequence: UInt64?

    /// The sequence number the next appended record gets.
    package var nextSequence: UInt64 {
        if let last = lastSequence { return last + 1 }
        return header?.firstSequence ?? 1
    }
}
