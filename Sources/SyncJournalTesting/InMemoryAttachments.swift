import SyncJournalProtocol

/// The attachment tables of an ``InMemoryStorage`` as a value (what a
/// backup copies): the contents held whole, who uploaded each, and the
/// unfinished uploads. Which rows refer to which content is derived from
/// the rows themselves.
struct InMemoryAttachments: Sendable {
    /// A content held whole.
    struct StoredContent: Sendable {
        /// Its bytes.
        var bytes: [UInt8]
        /// When it was last uploaded whole (server clock): collection keeps it for a grace period after.
        var storedAt: Int64
    }

    /// One user's unfinished upload of one content.
    struct Upload: Sendable {
        /// The content's declared size.
        var size: Int64
        /// The bytes kept so far (whole chunks only).
        var bytes: [UInt8]
        /// When a chunk last arrived (server clock).
        var touchedAt: Int64
    }

    /// Names one user's upload of one content.
    struct UploadKey: Sendable, Hashable {
        /// Who uploads.
        var user: String
        /// What.
        var content: ContentHash
    }

    /// The contents held whole.
    var stored: [ContentHash: StoredContent] = [:]
    /// Per content, the users who uploaded it whole (for the read rule and the quota).
    var uploaders: [ContentHash: Set<String>] = [:]
    /// The unfinished uploads.
    var uploads: [UploadKey: Upload] = [:]
}
