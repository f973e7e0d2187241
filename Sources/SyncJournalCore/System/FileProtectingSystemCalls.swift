/// System calls that give every file they create a data protection class:
/// the store opens its journal through these when
/// `LocalStore.Options.fileProtection` is set, so the journal, its lock
/// file, checkpoints and side files are all covered, whichever path creates them.
package struct FileProtectingSystemCalls: SystemCallsLayer {
    /// The calls every request goes to.
    package let base: any SystemCalls
    /// The class given to each file opened with `.create`.
    package let protection: FileProtection

    /// `base`, giving the files it creates `protection`.
    package init(_ base: any SystemCalls, protection: FileProtection) {
        self.base = base
        self.protection = protection
    }

    /// Opens the file; one opened with `create` gets the protection class
    /// before anything is written to it (a file that cannot get it is closed
    /// and the open fails: data must not land in a file less protected than asked).
    package func open(_ path: String, _ options: OpenOptions, _ mode: UInt32) throws(SystemError) -> FileDescriptor {
        let fd = try base.open(path, options, mode)
        guard options.contains(.create) else { return fd }
        do { try base.protect(path, as: protection) } catch {
            try? base.close(fd)
            throw error
        }
        return fd
    }
}
