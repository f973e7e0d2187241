/// One place of the outbox's queue: the operation and its delivery marks,
/// 80 bytes. A failure history, when there is one, lies in the outbox's side table.
struct OutboxSlot: Sendable {
    /// The edit.
    var operation: JournalOperation
    // The four marks share one byte: beside a 76-byte operation the slot,
    // optional or not, still takes 80 bytes in the queue.
    private var marks: UInt8

    private static let sentMark: UInt8 = 1
    private static let quarantinedMark: UInt8 = 2
    private static let failuresMark: UInt8 = 4
    private static let followsMark: UInt8 = 8

    /// A slot with these marks.
    init(operation: JournalOperation, sent: Bool, quarantined: Bool, hasFailures: Bool, follows: Bool = false) {
        self.operation = operation
        self.marks = (sent ? Self.sentMark : 0) | (quarantined ? Self.quarantinedMark : 0)
            | (hasFailures ? Self.failuresMark : 0) | (follows ? Self.followsMark : 0)
    }

    private func has(_ mark: UInt8) -> Bool { marks & mark != 0 }
    private mutating func set(_ mark: UInt8, _ on: Bool) { marks = on ? marks | mark : marks & ~mark }

    /// Whether it may have reached the server.
    var sent: Bool {
        get { has(Self.sentMark) }
        set { set(Self.sentMark, newValue) }
    }
    /// Whether it waits for the app.
    var quarantined: Bool {
        get { has(Self.quarantinedMark) }
        set { set(Self.quarantinedMark, newValue) }
    }
    /// Whether the side table holds a failure history for it.
    var hasFailures: Bool {
        get { has(Self.failuresMark) }
        set { set(Self.failuresMark, newValue) }
    }
    /// Whether an earlier queued operation changes the same record (then
    /// that one, not this, decides whether the record is ready to send).
    var follows: Bool {
        get { has(Self.followsMark) }
        set { set(Self.followsMark, newValue) }
    }
}
