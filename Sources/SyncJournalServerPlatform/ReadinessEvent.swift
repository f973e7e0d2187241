import SyncJournalPlatform
/// What an ``EventPoller`` reported about one descriptor.
///
/// ```swift
/// for event in events where event.readable { readMore(event.descriptor) }
/// ```
package struct ReadinessEvent: Sendable, Hashable {
    /// The descriptor.
    package var descriptor: Int32
    /// Input, or end of file, can be read.
    package var readable: Bool
    /// Output can be written.
    package var writable: Bool
    /// The peer hung up or the socket is in error (a read tells which).
    package var hangUp: Bool

    /// Creates a report.
    package init(descriptor: Int32, readable: Bool, writable: Bool, hangUp: Bool) {
        self.descriptor = descriptor
        self.readable = readable
        self.writable = writable
        self.hangUp = hangUp
    }
}
