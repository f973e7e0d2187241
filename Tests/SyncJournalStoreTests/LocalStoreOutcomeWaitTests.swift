import SyncJournalCore
import SyncJournalProtocol
import SyncJournalStore
import Testing

// `outcome(of:timeout:clock:)` without an engine: the timeout and task
// cancellation end the wait with `.pending`; an outcome before them wins.

@Suite("LocalStore: waiting for an outcome, with a timeout and cancellation")
struct LocalStoreOutcomeWaitTests {
    typealias Kit = StoreRulesKit

    @Test("with no engine running, the wait ends with .pending when the timeout passes on the injected clock")
    func timeoutEndsWithPending() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edit = try await store.create("pin", id: "a", fields: [:])
            let clock = SteppedClock()
            async let outcome = store.outcome(of: edit.operation, timeout: .seconds(30), clock: clock)
            await clock.untilSomethingSleeps()
            clock.advance(by: .seconds(30))
            #expect(await outcome == .pending)
            #expect(try await store.outboxOperations().map(\.id) == [edit.operation], "the operation is still queued")
            try await store.close()
        }
    }

    @Test("an outcome that arrives before the timeout is the one returned")
    func outcomeBeforeTimeoutWins() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edit = try await store.create("pin", id: "a", fields: [:])
            let clock = SteppedClock()
            async let outcome = store.outcome(of: edit.operation, timeout: .seconds(30), clock: clock)
            await clock.untilSomethingSleeps()
            let row = Kit.row("a", at: 500)
            try await store.beginSending([edit.operation])
            try await store.recordOutcomes([(edit.operation, .acknowledged(row))])
            await store.finishSending([edit.operation])
            #expect(await outcome == .acknowledged(row))
            clock.advance(by: .seconds(30))
            try await store.close()
        }
    }

    @Test("cancelling the waiting task ends the wait with .pending, whether it is cancelled before or while it waits")
    func cancellationEndsWithPending() async throws {
        try await Kit.withScratch { scratch in
            let store = try await Kit.open(scratch.journal)
            let edit = try await store.create("pin", id: "a", fields: [:])
            let waiting = Task { await store.outcome(of: edit.operation) }
            waiting.cancel()
            #expect(await waiting.value == .pending)
            // Cancelled while it waits: it started waiting behind a timeout that never passes.
            let clock = SteppedClock()
            let parked = Task { await store.outcome(of: edit.operation, timeout: .seconds(3600), clock: clock) }
            await clock.untilSomethingSleeps()
            parked.cancel()
            #expect(await parked.value == .pending)
            try await store.close()
        }
    }
}
