import SyncJournalProtocol
import SyncJournalStore

extension SyncEngine {
    /// Journals that the server does not match and returns the sync's
    /// outcome: nothing is charged, deleted or conflicted, and every later
    /// sync stops before sending anything until a reconciliation.
    func stopForMismatch(_ mismatch: ServerMismatch) async -> SyncOutcome {
        do { try await store.recordServer(.mismatched(mismatch)) } catch { return .failed(.store(error)) }
        return .failed(.serverMismatch(mismatch))
    }

    /// Checks the identity a pull reply carries, before any row of it is
    /// kept: the first one is learned (journaled); one that differs from the
    /// journaled identity stops the sync, as the server's own refusal would
    /// (a server that does not check expectations is caught here). A reply
    /// without an identity (a server that has none) is taken as before.
    /// Returns the outcome to stop with, or `nil` to go on.
    func checkServer(of page: PullPage) async -> SyncOutcome? {
        guard let found = page.server else { return nil }
        let known: KnownServer
        do { known = try await store.knownServer() } catch { return .failed(.store(error)) }
        guard let expected = known.identity else {
            do { try await store.recordServer(.learned(found)) } catch { return .failed(.store(error)) }
            return nil
        }
        if expected == found { return nil }
        return await stopForMismatch(.differentServer(expected: expected, found: found))
    }
}
