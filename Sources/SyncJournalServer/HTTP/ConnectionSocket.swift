#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted connection's file descriptor, with reads and writes that
/// retry `EINTR`, finish short writes and never raise `SIGPIPE`.
struct ConnectionSocket: Sendable {
    let descriptor: Int32

    /// What a wait for input saw.
    enum Readiness {
        case readable
        case woken
        case timedOut
    }

    /// Waits until the socket has input (or end of file), `wake` becomes
    /// readable (the server is stopping), or `milliseconds` pass.
    func waitForInput(milliseconds: Int, wake: Int32?) throws(SocketError) -> Readiness {
        let deadline = MonotonicClock.milliseconds() + Int64(milliseconds)
        while true {
            let remaining = max(0, deadline - MonotonicClock.milliseconds())
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let wake { descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
            let count = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: remaining))
            if count < 0 {
                if errno == EINTR { continue }
                throw SocketError(call: "poll", errno: errno, context: "connection \(descriptor)")
            }
            if count == 0 { return .timedOut }
            // Input (or a hang-up, which reads as end of file) wins over the wake-up: finish what arrived.
            if descriptors[0].revents != 0 { return .readable }
            return .woken
        }
    }

    /// Reads what is available into `buffer` (appending); 0 at end of file.
    func read(appendingTo buffer: inout [UInt8], maximum: Int = 64 * 1024) throws(SocketError) -> Int {
        var chunk = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return count
            }
            if errno == EINTR { continue }
            throw SocketError(call: "recv", errno: errno, context: "connection \(descriptor)")
        }
    }

    /// Writes all of `bytes` (a short write continues; `SO_SNDTIMEO` bounds
    /// each wait). `flags` adds to `send`'s (`MSG_DONTWAIT`: never wait).
    func write(_ bytes: [UInt8], flags: Int32 = 0) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return send(descriptor, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL) | flags)
            }
            if count >= 0 {
                offset += count
                continue
            }
            if errno == EINTR { continue }
            // EAGAIN here is the send timeout: the client stopped reading.
            throw SocketError(call: "send", errno: errno, context: "connection \(descriptor)")
        }
    }

    /// Sets the send timeout and turns off Nagle's delay (replies are whole).
    func configure(writeTimeoutMilliseconds: Int) {
        var timeout = timeval(tv_sec: writeTimeoutMilliseconds / 1_000, tv_usec: (writeTimeoutMilliseconds % 1_000) * 1_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes after a last answer: stop sending, then read and discard what
    /// the client still sends (briefly), so the kernel does not reset the
    /// connection and destroy the answer before the client has read it.
    func closeAfterAnswer(lingerMilliseconds: Int = 1_000) {
        _ = shutdown(descriptor, Int32(SHUT_WR))
        let deadline = MonotonicClock.milliseconds() + Int64(lingerMilliseconds)
        var discarded = 0
        var sink: [UInt8] = []
        while discarded < 1 << 20 {
            let remaining = Int(deadline - MonotonicClock.milliseconds())
            guard remaining > 0, let readiness = try? waitForInput(milliseconds: remaining, wake: nil), readiness == .readable else { break }
            sink.removeAll(keepingCapacity: true)
            guard let count = try? read(appendingTo: &sink), count > 0 else { break }
            discarded += count
        }
        close()
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
