import Observation

/// The results of a query, kept current for a view: ``records`` changes
/// whenever the query's results do, and SwiftUI redraws what reads it.
///
/// ```swift
/// @MainActor
/// func inbox(_ store: LocalStore) -> LiveQuery {
///     LiveQuery(Query("note").filter(Field("list") == "inbox").order(Field("due")), in: store)
/// }
/// ```
///
/// It follows ``LocalStore/observe(_:)`` from the moment it is made until it
/// is released or the store closes.
@MainActor
@Observable
public final class LiveQuery {
    /// The query followed.
    public let query: Query
    /// The query's current results, in its order (empty until the first results arrive).
    public private(set) var records: [StoreRecord] = []
    @ObservationIgnored private var reader: Task<Void, Never>?

    /// Follows `query` in `store`.
    public init(_ query: Query, in store: LocalStore) {
        self.query = query
        reader = Task { [weak self] in
            for await records in store.observe(query) {
                guard let self else { return }
                self.records = records
            }
        }
    }

    deinit {
        reader?.cancel()
    }
}
