/// An invariant the simulator checks after every step and at the end. Its raw
/// value is the name printed in reports (`nothing-lost: …`).
public enum Invariant: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Every edit the store acknowledged is still queued, was applied by the
    /// server, or is surfaced as a conflict or rejection (or was cancelled
    /// locally before it ever left the device).
    case nothingLost = "nothing-lost"
    /// A record a device deleted does not show again without a later create
    /// or a conflict to explain it; a row the server deleted is not live again
    /// without a later create.
    case noResurrection = "no-resurrection"
    /// The server never applies one operation twice.
    case noDoubleApply = "no-double-apply"
    /// A reopened journal replays to the state before the crash (inside an
    /// edit's write: before or after that edit), and a store stays readable.
    case replayEqualsState = "replay-equals-state"
    /// Devices on two versions of the note model: reading records in the newer
    /// shape never queues an edit, an older device's edit never carries a field
    /// its version does not know, and every note reads on every version.
    case modelVersions = "model-versions"
    /// With more than one user: after a pull a device shows no record of a
    /// shared space its user was not a member of at that pull, and the spaces
    /// and roles it holds are the server's.
    case spaceMembership = "space-membership"
    /// With attachments: once a device has synced to the end, every file of
    /// a record it shows is on the device or readable for its user on the
    /// server, and opening it then succeeds with the right bytes.
    case attachmentAvailable = "attachment-available"
    /// With attachments: a file a device added stays on the device until the
    /// server holds it for the device's user, as long as an edit of the
    /// device still queued refers to it.
    case attachmentKeptUntilUploaded = "attachment-kept-until-uploaded"
    /// Once faults stop and every engine has run on its own schedule for two
    /// hours, every device shows what the server holds and every outbox is empty.
    case convergence
    /// Not an invariant of the code under test: with `--server`, the harness
    /// could not read the server's state or write to it as another writer.
    case server

    /// The printed name.
    public var description: String { rawValue }
}
