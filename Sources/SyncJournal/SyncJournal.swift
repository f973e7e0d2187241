// The library product: one `import SyncJournal` gives an app the public API of
// every layer it needs.
@_exported import SyncJournalCore
@_exported import SyncJournalProtocol
@_exported import SyncJournalStore
@_exported import SyncJournalSync
