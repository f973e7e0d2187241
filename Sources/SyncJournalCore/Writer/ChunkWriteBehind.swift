import Dispatch

/// Writes a checkpoint file's chunks on a thread of its own, one at a time,
/// while the caller encodes the next chunk: encoding and the kernel's copy
/// into the page cache then use both cores instead of taking turns.
///
/// Two buffers take turns: the caller fills one while the other is written.
/// A failed write is reported by the next call, and nothing after it is
/// written.
final class ChunkWriteBehind: @unchecked Sendable {
    // @unchecked: `buffer` and `failure` are touched by the writing thread
    // only between taking `idle` and signalling it, and by the caller only
    // while it holds `idle`; the semaphore orders the two.

    /// The buffer being written, or, between writes, the emptied spare.
    private final class Buffer: @unchecked Sendable {
        var bytes: [UInt8]
        init(capacity: Int) {
            bytes = []
            bytes.reserveCapacity(capacity)
        }
    }

    private let io: FileIO
    private let fd: FileDescriptor
    private let path: String
    private let queue = DispatchQueue(label: "SyncJournal.checkpoint-write")
    /// Taken while a write is in flight.
    private let idle = DispatchSemaphore(value: 1)
    private let buffer: Buffer
    private var failure: SystemError?

    init(io: FileIO, fd: FileDescriptor, path: String, capacity: Int) {
        self.io = io
        self.fd = fd
        self.path = path
        buffer = Buffer(capacity: capacity)
    }

    /// Waits for the previous write, then starts writing `chunk` at `offset`
    /// and hands back the previous chunk's buffer, emptied, in its place.
    func write(_ chunk: inout [UInt8], at offset: Int64) throws(SystemError) {
        idle.wait()
        if let failure {
            idle.signal()
            throw failure
        }
        swap(&chunk, &buffer.bytes)
        let buffer = self.buffer
        queue.async { [self] in
            do throws(SystemError) { try io.writeAll(fd, buffer.bytes, at: offset, path: path) } catch { failure = error }
            buffer.bytes.removeAll(keepingCapacity: true)
            idle.signal()
        }
    }

    /// Waits until every chunk handed over is written, and reports a failed write.
    func finish() throws(SystemError) {
        idle.wait()
        defer { idle.signal() }
        if let failure { throw failure }
    }
}
