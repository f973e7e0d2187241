import SyncJournalProtocol
import SyncJournalStore

/// One kind pulled whole, from the start, in the personal space and in every
/// shared space the device follows: what a resync and a reconciliation both
/// gather, page by page, before they replace the kind's snapshot.
///
/// The rules it keeps, so both keep them alike:
/// - a row changed during the re-pull comes again on a later page, and the
///   later copy wins;
/// - every shared space is named from its start, so each comes whole, and a
///   space first described on a page is named from its start from then on;
/// - a space the server no longer lets the device read loses what was
///   gathered of it, its rows and its cursor.
struct WholeKindPull {
    /// The kind pulled.
    let kind: String
    /// The personal space's cursor after the last page.
    private(set) var cursor: PullCursor?
    /// Each shared space's cursor after the last page that carried its rows.
    private(set) var spaceCursors: [SpaceID: PullCursor] = [:]
    /// What has been gathered, by record; a row's key names its space.
    private(set) var rows: [RecordKey: ServerRow] = [:]
    /// The shared spaces the next request names; `nil` when the device
    /// follows none, and the request then names none.
    private(set) var named: [SpaceID: SpaceCursors]?
    /// Pages folded in so far.
    private(set) var pages = 0

    /// A pull of `kind` from the start in the personal space and in
    /// `spaces` (each with the description version the device holds), or in
    /// the personal space alone when `spaces` is `nil`.
    init(kind: String, spaces: [SpaceID: Int64?]?) {
        self.kind = kind
        named = spaces.map { $0.mapValues { SpaceCursors(version: $0, cursors: [kind: nil]) } }
    }

    /// Whether shared spaces are named, so a page's space descriptions and
    /// losses are the device's to keep.
    var followsSpaces: Bool { named != nil }

    /// The personal cursor as a pull request names it.
    var cursors: [String: PullCursor?] { [kind: cursor] }

    /// The next page's request.
    func request(limit: Int, expectation: ServerExpectation?) -> PullRequest {
        PullRequest(cursors: cursors, limit: limit, isResync: true, expectation: expectation, spaces: named)
    }

    /// Folds in a page's space descriptions and losses: a newly described
    /// space is named from its start, a lost one forgets what was gathered of
    /// it. Returns the lost spaces that had been named.
    mutating func absorbSpaces(of page: PullPage) -> [SpaceID] {
        guard named != nil else { return [] }
        for space in page.spaces where named?[space.id] == nil {
            named?[space.id] = SpaceCursors(version: space.version, cursors: [kind: nil])
        }
        var lost: [SpaceID] = []
        for space in page.lostSpaces {
            if named?.removeValue(forKey: space) != nil { lost.append(space) }
            spaceCursors[space] = nil
            for key in rows.keys where key.space == space { rows[key] = nil }
        }
        return lost
    }

    /// Folds in a page's rows (already checked) and moves the cursors past them.
    mutating func absorbRows(_ grouped: [LocalStore.PulledKindPage]) {
        for kindPage in grouped {
            for row in kindPage.rows { rows[row.key] = row }
            guard let next = kindPage.cursor else { continue }
            if kindPage.space.isPersonal { cursor = next } else {
                spaceCursors[kindPage.space] = next
                named?[kindPage.space]?.cursors[kind] = .some(next)
            }
        }
        pages += 1
    }

    /// The spaces whose snapshot of the kind the pull replaces, in order:
    /// the personal space, then every shared space still named.
    var spacesPulled: [SpaceID] {
        [.personal] + (named?.keys.sorted(by: <) ?? [])
    }

    /// The cursor the pull ended at in `space`.
    func cursor(in space: SpaceID) -> PullCursor? {
        space.isPersonal ? cursor : spaceCursors[space]
    }

    /// Every row gathered, in the order a pull hands them out (by
    /// `updatedAt`, then id).
    func rowsInPullOrder(in space: SpaceID? = nil) -> [ServerRow] {
        rows.values.filter { space == nil || $0.space == space }.sorted {
            PullCursor(updatedAt: $0.updatedAt, id: $0.id) < PullCursor(updatedAt: $1.updatedAt, id: $1.id)
        }
    }
}
