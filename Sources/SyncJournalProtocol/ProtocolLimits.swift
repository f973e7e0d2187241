/// The sizes the sync protocol allows, the same for the client, the wire and
/// every server (`journals/PROTOCOL.md`, "Limits").
///
/// A mutation over a per-mutation limit is refused by itself (a permanent
/// `rejected` result naming the limit, the rest of its push still applied);
/// a request over a per-request limit is refused whole with a 4xx.
///
/// ```swift
/// let fits = id.utf8.count <= ProtocolLimits.maximumRecordIDBytes
/// ```
package enum ProtocolLimits {
    /// The longest record id (and so the longest cursor id), in UTF-8 bytes:
    /// short enough for a database key, long enough for a UUID with a prefix.
    package static let maximumRecordIDBytes = 64

    /// The longest kind, in UTF-8 bytes: with a record id and an owner it
    /// stays far inside a database index entry (PostgreSQL's b-tree takes
    /// about 2,700 bytes), and is ample for a type name.
    package static let maximumKindBytes = 128

    /// The most fields one record holds: a create carries at most this
    /// many, and an update may not grow a record past it.
    package static let maximumFieldsPerRecord = 256

    /// The longest field name, in UTF-8 bytes.
    package static let maximumFieldNameBytes = 128

    /// The most kinds one pull may name: each costs the
    /// server its own queries, so a request cannot ask for unbounded work.
    package static let maximumKindsPerPull = 256

    /// The most mutations one push may carry unless the server is configured
    /// otherwise (`sync-server --max-batch`); a larger push is refused whole
    /// with 413 `too_large`.
    package static let maximumMutationsPerPush = 1_000

    /// The most rows one pull may ask for: large enough that a first sync
    /// takes few round trips, small enough that one page fits in memory.
    package static let maximumPullLimit = 10_000

    /// About how many bytes of rows one pull page carries at most: a page
    /// ends early (with `hasMore`) once its rows pass this, so a page of
    /// large records stays far below a client's reply limit (32 MiB for
    /// `HTTPTransport`) even when escaping makes the JSON several times
    /// larger. A page always carries at least one row, which a push's body
    /// limit already bounds.
    package static let pullPageByteBudget = 4 << 20

    /// The highest model version (`SyncRecord.schemaVersion`) an edit or a
    /// row may carry: 65,535, far beyond any app's count of releases, small
    /// enough that a queued operation keeps it in two bytes.
    package static let maximumModelVersion = 65_535

    /// The longest name of a shared space, in UTF-8 bytes.
    package static let maximumSpaceNameBytes = 128

    /// The most shared spaces one user may be a member of: one pull covers
    /// them all, so its request stays bounded.
    package static let maximumSpacesPerUser = 1_000

    /// The most members one shared space may have.
    package static let maximumMembersPerSpace = 1_000

    /// The most bytes of an attachment one upload or download request
    /// carries (4 MiB): a transfer cut anywhere loses at most this much.
    package static let maximumAttachmentChunkBytes = 4 << 20

    /// The most contents one attachment status request asks about.
    package static let maximumAttachmentStatusContents = 1_000

    /// Whether `version` is a model version the protocol carries: 1 to
    /// ``maximumModelVersion``.
    ///
    /// ```swift
    /// ProtocolLimits.isValidModelVersion(3)   // true
    /// ProtocolLimits.isValidModelVersion(0)   // false
    /// ```
    package static func isValidModelVersion(_ version: Int) -> Bool {
        version >= 1 && version <= maximumModelVersion
    }

    /// Why `version` cannot be a model version, or `nil` (see ``isValidModelVersion(_:)``).
    ///
    /// ```swift
    /// ProtocolLimits.problem(modelVersion: 0)   // "model version 0, not 1 to 65535"
    /// ```
    package static func problem(modelVersion version: Int) -> String? {
        isValidModelVersion(version) ? nil : "model version \(version), not 1 to \(maximumModelVersion)"
    }

    /// Why `kind` cannot name records, or `nil`: it must be 1 to
    /// ``maximumKindBytes`` bytes of UTF-8 without U+0000 (which PostgreSQL
    /// text cannot hold, so no backend accepts it).
    ///
    /// ```swift
    /// ProtocolLimits.problem(kind: String(repeating: "k", count: 129))   // "kind of 129 bytes, at most 128"
    /// ```
    package static func problem(kind: String) -> String? {
        let count = kind.utf8.count
        if count == 0 { return "empty kind" }
        if count > maximumKindBytes { return "kind of \(count) bytes, at most \(maximumKindBytes)" }
        if kind.utf8.contains(0) { return "kind contains U+0000" }
        return nil
    }

    /// Why `id` cannot be a record id, or `nil`: it must be 1 to
    /// ``maximumRecordIDBytes`` bytes of UTF-8 without U+0000.
    ///
    /// ```swift
    /// ProtocolLimits.problem(recordID: "")   // "record id must be 1 to 64 bytes of UTF-8"
    /// ```
    package static func problem(recordID id: String) -> String? {
        let count = id.utf8.count
        if count == 0 || count > maximumRecordIDBytes {
            return "record id must be 1 to \(maximumRecordIDBytes) bytes of UTF-8" + (count == 0 ? "" : ", not \(count)")
        }
        if id.utf8.contains(0) { return "record id contains U+0000" }
        return nil
    }

    /// Why a record cannot hold `fields`, or `nil`: at most
    /// ``maximumFieldsPerRecord`` fields, each name at most
    /// ``maximumFieldNameBytes`` bytes (the value rules are
    /// `FieldValue.problem(in:)`'s).
    ///
    /// ```swift
    /// ProtocolLimits.problem(fieldCount: 300, names: [])   // "300 fields, at most 256 in a record"
    /// ```
    package static func problem(fieldCount: Int, names: some Sequence<String>) -> String? {
        if fieldCount > maximumFieldsPerRecord { return "\(fieldCount) fields, at most \(maximumFieldsPerRecord) in a record" }
        var longest: (name: String, bytes: Int)?
        for name in names where name.utf8.count > maximumFieldNameBytes {
            if longest.map({ name < $0.name }) ?? true { longest = (name, name.utf8.count) }
        }
        if let longest {
            return "field name \"\(longest.name.prefix(16))…\" of \(longest.bytes) bytes, at most \(maximumFieldNameBytes)"
        }
        return nil
    }
}
