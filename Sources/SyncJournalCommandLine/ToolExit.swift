/// Exit statuses shared by the tools (BSD `sysexits` numbering where one fits).
package enum ToolExit: Int32, Sendable {
    /// Success: the journal is clean.
    case ok = 0
    /// Damage found (torn tail or corrupt), or a check failed.
    case damage = 1
    /// The journal is intact but holds something this version does not
    /// understand (a record type it may not skip, a reserved field or header
    /// flag that is not zero): read-only here, written by a newer version.
    case unsupported = 3
    /// The command line is wrong (`EX_USAGE`).
    case usage = 64
    /// The file is not a journal this tool can read (bad magic or unknown major version).
    case notAJournal = 65
    /// The file cannot be opened or read.
    case cannotOpen = 66
    /// A server the tool needs cannot be reached or refuses it.
    case unavailable = 69
}
