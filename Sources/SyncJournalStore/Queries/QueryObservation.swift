/// The results of a query as they change (``LocalStore/observe(_:)``): the
/// current results first, then new ones after each change that alters them.
///
/// Only the latest results are kept for a reader: one that reads slowly
/// skips the states in between, never the last one, and never holds up the
/// store. The sequence ends when the store closes or retires, or when the
/// task reading it is cancelled.
///
/// ```swift
/// let store = try await LocalStore.open(path: "notes.journal")
/// for await notes in store.observe(Query("note").order(Field("title"))) {
///     print(notes.count)                 // the current results first: 0, then 1
///     if notes.isEmpty {
///         try await store.create("note", fields: ["title": "Buy milk"])
///     } else {
///         try await store.close()        // ends the sequence
///     }
/// }
/// ```
///
/// (The observation starts with the first read: a reader started in a task
/// just before the store closes may see nothing at all.)
public struct QueryObservation: AsyncSequence, Sendable {
    /// The query's results, in its order.
    public typealias Element = [StoreRecord]

    let store: LocalStore
    let query: Query

    /// Starts reading: the first ``Iterator/next()`` returns the current results.
    public func makeAsyncIterator() -> Iterator { Iterator(store: store, query: query) }

    /// Reads the results of one observation.
    public struct Iterator: AsyncIteratorProtocol {
        let store: LocalStore
        let query: Query
        private var registration: Registration?
        private var finished = false

        init(store: LocalStore, query: Query) {
            self.store = store
            self.query = query
        }

        /// The current results on the first call, then the next results that
        /// differ from the last ones returned; `nil` once the observation ended.
        public mutating func next() async -> [StoreRecord]? {
            if finished { return nil }
            guard let registration else {
                guard let (token, results) = await store.startObservation(query) else {
                    finished = true
                    return nil
                }
                registration = Registration(store: store, token: token)
                return results
            }
            let store = self.store, token = registration.token
            let results = await withTaskCancellationHandler {
                await store.nextResults(token)
            } onCancel: {
                Task { await store.stopObservation(token) }
            }
            if results == nil {
                finished = true
                self.registration = nil
            }
            return results
        }
    }

    /// Ends the store's side of an observation when its reader is dropped.
    final class Registration: Sendable {
        let store: LocalStore
        let token: Int

        init(store: LocalStore, token: Int) {
            self.store = store
            self.token = token
        }

        deinit {
            Task { [store, token] in await store.stopObservation(token) }
        }
    }
}
