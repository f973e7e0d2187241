import Dispatch
import SyncJournalPlatform
import SyncJournalServerPlatform

/// One `sync-server`'s ear on the shared database: a dedicated connection
/// that runs `listen` on ``PostgreSQLChangeNotice/channel`` and a thread
/// that waits on its socket (through an ``EventPoller``) and turns each
/// notification into a ``StorageChange`` for the observer. Pushes of every
/// server process sharing the database arrive this way, within the time
/// the notification takes to travel (each server sends them once its
/// pushes have committed: ``PostgreSQLChangeAnnouncer``).
///
/// A lost connection is made again (at once, then after a second as often
/// as it fails); notifications sent meanwhile are lost, so the observer is
/// told ``StorageChange/unknown`` once the new connection listens.
///
/// ```swift
/// let listener = PostgreSQLChangeListener(connection: conninfo) { change in registry.wake(change) }
/// listener.start()
/// listener.stop()
/// ```
final class PostgreSQLChangeListener: Sendable {
    private let connection: String
    private let observer: @Sendable (StorageChange) -> Void
    private let stopped = Atomic(false)
    /// The listening connection's database server process (0 while none
    /// listens), how many connections have listened so far, and who waits
    /// for a later one.
    private let listened = Mutex<(process: Int32, connections: Int, waiting: [(after: Int, signal: DispatchSemaphore)])>((0, 0, []))
    private let thread = Mutex<PlatformThread?>(nil)
    /// Signalled by ``stop()``: ends a reconnect pause early.
    private let stopSignal = DispatchSemaphore(value: 0)
    /// Signalled once the first connection listens (or failed), so ``start()`` returns ready.
    private let firstAttempt = DispatchSemaphore(value: 0)

    /// How long one wait on the socket lasts before the stop flag is looked at again.
    private static let pollMilliseconds: Int32 = 100
    /// The pause before connecting again after a failure.
    private static let reconnectMilliseconds = 1_000

    /// A listener for the database `connection` names; nothing runs until ``start()``.
    init(connection: String, observer: @escaping @Sendable (StorageChange) -> Void) {
        self.connection = connection
        self.observer = observer
    }

    /// Starts the listening thread and returns once its first connection
    /// listens (or failed: it keeps trying). Returns `false` when no thread could be made.
    @discardableResult
    func start() -> Bool {
        guard let started = PlatformThread.start({ [self] in run() }) else { return false }
        thread.withLock { $0 = started }
        firstAttempt.wait()
        return true
    }

    /// Stops listening, closes the connection and joins the thread.
    func stop() {
        stopped.store(true, ordering: .releasing)
        stopSignal.signal()
        if let running = thread.withLock({ current -> PlatformThread? in
            defer { current = nil }
            return current
        }) {
            running.join()
        }
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The database server process of the listening connection and how
    /// many connections have listened so far (`nil` while none listens):
    /// for tests that end it with `pg_terminate_backend`.
    var listeningConnection: (process: Int32, number: Int)? {
        listened.withLock { $0.process == 0 ? nil : ($0.process, $0.connections) }
    }

    /// Blocks until a connection later than the `number`th listens (the
    /// observer has then been told of an unknown change), or
    /// `timeoutMilliseconds` passes; returns whether one did.
    func waitForConnection(after number: Int, timeoutMilliseconds: Int) -> Bool {
        let signal = DispatchSemaphore(value: 0)
        let already = listened.withLock { listening -> Bool in
            if listening.connections > number { return true }
            listening.waiting.append((number, signal))
            return false
        }
        return already || signal.wait(timeout: .now() + .milliseconds(timeoutMilliseconds)) == .success
    }

    private func run() {
        var signalledFirst = false
        var missedSome = false
        defer { if !signalledFirst { firstAttempt.signal() } }
        while !isStopped {
            guard let (database, poller, schema) = listen() else {
                if !signalledFirst {
                    signalledFirst = true
                    firstAttempt.signal()
                }
                missedSome = true
                _ = stopSignal.wait(timeout: .now() + .milliseconds(Self.reconnectMilliseconds))
                continue
            }
            if missedSome { observer(.unknown) }
            missedSome = true
            // Counted after the observer heard of what may have been missed.
            let ready = listened.withLock { listening -> [DispatchSemaphore] in
                listening.process = database.serverProcessID
                listening.connections += 1
                let count = listening.connections
                let ready = listening.waiting.filter { $0.after < count }.map(\.signal)
                listening.waiting.removeAll { $0.after < count }
                return ready
            }
            for signal in ready { signal.signal() }
            // Only now, so that a caller of `start()` already sees the connection counted.
            if !signalledFirst {
                signalledFirst = true
                firstAttempt.signal()
            }
            serve(database, poller, schema: schema)
            listened.withLock { $0.process = 0 }
            poller.forget(database.socketDescriptor)
            database.close()
        }
    }

    /// A new connection that listens, with a poller watching its socket and
    /// the schema its pushes write; `nil` on failure.
    private func listen() -> (PostgreSQLConnection, EventPoller, String)? {
        do throws(PostgreSQLError) {
            let database = try PostgreSQLConnection(connection: connection, applicationName: "sync-server change listener")
            let schema = try database.execute("select coalesce(current_schema(), '')").text(0, 0)
            try database.execute("listen \(PostgreSQLChangeNotice.channel)")
            guard let poller = try? EventPoller(), database.socketDescriptor >= 0,
                  (try? poller.watch(database.socketDescriptor, readable: true, writable: false)) != nil else {
                database.close()
                return nil
            }
            return (database, poller, schema)
        } catch {
            return nil
        }
    }

    /// Hands notifications to the observer until stopped or the connection breaks.
    private func serve(_ database: PostgreSQLConnection, _ poller: EventPoller, schema: String) {
        var events: [ReadinessEvent] = []
        while !isStopped {
            do throws(Errno) {
                try poller.wait(into: &events, milliseconds: Self.pollMilliseconds, capacity: 4)
            } catch {
                return
            }
            if events.isEmpty { continue }
            let notifications: [PostgreSQLNotification]
            do throws(PostgreSQLError) { notifications = try database.takeNotifications() } catch { return }
            for notification in notifications where notification.channel == PostgreSQLChangeNotice.channel {
                if let change = PostgreSQLChangeNotice.change(from: notification.payload, schema: schema) { observer(change) }
            }
        }
    }
}
