/// The data protection class of the files a store creates, as iOS and its
/// siblings define it: when the system keeps a file's key while the device
/// is locked. Elsewhere (macOS, Linux) it has no effect.
///
/// The journal must be readable and writable whenever the app (or an
/// extension) syncs: ``completeUntilFirstUserAuthentication`` suits work in
/// the background; ``complete`` stops every read and write while the device
/// is locked, so a store opened or resumed then fails.
///
/// ```swift
/// var options = LocalStore.Options()
/// options.fileProtection = .completeUntilFirstUserAuthentication
/// ```
public enum FileProtection: String, Sendable, Hashable, CaseIterable {
    /// No protection: readable at any time, even before the first unlock.
    case none
    /// Readable and writable only while the device is unlocked.
    case complete
    /// Created while unlocked; a file already open stays usable after the
    /// device locks, but it cannot be opened again until the next unlock.
    case completeUnlessOpen
    /// Readable and writable once the user has unlocked the device after a
    /// restart (iOS's default for app files).
    case completeUntilFirstUserAuthentication
}
