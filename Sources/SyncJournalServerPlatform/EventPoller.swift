import SyncJournalPlatform
import CSyncJournalEventPoll

/// A level-triggered readiness queue over many descriptors: epoll on Linux,
/// kqueue on Darwin (the C target `CSyncJournalEventPoll` holds both). One
/// thread waits on it; any thread may change what is watched.
///
/// ```swift
/// let poller = try EventPoller()
/// try poller.watch(socket, readable: true, writable: false)
/// var events: [ReadinessEvent] = []
/// try poller.wait(into: &events, milliseconds: 100)
/// ```
package final class EventPoller: Sendable {
    /// The epoll or kqueue descriptor.
    package let descriptor: Int32

    /// A new queue.
    ///
    /// - Throws: the `errno` of `epoll_create1` or `kqueue` (`EMFILE` when out of descriptors).
    package init() throws(Errno) {
        let created = sj_poller_create()
        guard created >= 0 else { throw .current }
        descriptor = created
    }

    deinit { try? SystemFile.close(descriptor) }

    /// Starts watching `socket` for input (`readable`) and for room to write (`writable`).
    package func watch(_ socket: Int32, readable: Bool, writable: Bool) throws(Errno) {
        guard sj_poller_set(descriptor, socket, readable ? 1 : 0, writable ? 1 : 0, 1) == 0 else { throw .current }
    }

    /// Changes what a watched `socket` is watched for.
    package func change(_ socket: Int32, readable: Bool, writable: Bool) throws(Errno) {
        guard sj_poller_set(descriptor, socket, readable ? 1 : 0, writable ? 1 : 0, 0) == 0 else { throw .current }
    }

    /// Stops watching `socket`; call it before closing the descriptor. Errors are ignored.
    package func forget(_ socket: Int32) {
        _ = sj_poller_remove(descriptor, socket)
    }

    /// Waits at most `milliseconds` (-1: no limit) and replaces `events` with
    /// what is ready (empty after a timeout or an interrupting signal).
    ///
    /// - Throws: the `errno` of `epoll_wait` or `kevent`, except `EINTR`.
    package func wait(into events: inout [ReadinessEvent], milliseconds: Int32, capacity: Int = 256) throws(Errno) {
        events.removeAll(keepingCapacity: true)
        var raw = [sj_poll_event](repeating: sj_poll_event(), count: capacity)
        let count = raw.withUnsafeMutableBufferPointer { buffer in
            sj_poller_wait(descriptor, buffer.baseAddress, Int32(buffer.count), milliseconds)
        }
        if count < 0 {
            let error = Errno.current
            if error == .interrupted { return }
            throw error
        }
        for index in 0..<Int(count) {
            let entry = raw[index]
            events.append(ReadinessEvent(descriptor: entry.descriptor, readable: entry.readable != 0,
                                         writable: entry.writable != 0, hangUp: entry.hangup != 0))
        }
    }
}
