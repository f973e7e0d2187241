/// Edits handed to the store from outside its actor: the app's creates,
/// updates and deletes, queued under a lock and moved into the batcher by
/// one job on the store's thread.
///
/// Why not simply an actor call: a caller awaiting a continuation inside
/// the actor is resumed on the shared pool and must then hop back onto the
/// store's thread before it can return, a third thread hand-over per edit.
/// An edit handed in here costs two: the caller's request reaching the
/// store's thread, and the store resuming the caller once the edit is
/// durable.
struct WriteInbox {
    /// Requests in the order they were handed in.
    var requests: [WriteBatcher.Request] = []
    /// Whether a job to move them into the batcher is already queued on the
    /// store's thread (later requests ride along with it).
    var drainQueued = false
}
