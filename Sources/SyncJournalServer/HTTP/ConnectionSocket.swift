import SyncJournalPlatform

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
            let ready: [Bool]
            do throws(Errno) {
                ready = try SystemSocket.pollForInput(wake.map { [descriptor, $0] } ?? [descriptor], milliseconds: Int32(clamping: remaining))
            } catch {
                if error == .interrupted { continue }
                throw SocketError(call: "poll", code: error, context: "connection \(descriptor)")
            }
            // Input (or a hang-up, which reads as end of file) wins over the wake-up: finish what arrived.
            if ready[0] { return .readable }
            return ready.contains(true) ? .woken : .timedOut
        }
    }

    /// Reads what is available into `buffer` (appending); 0 at end of file.
    func read(appendingTo buffer: inout [UInt8], maximum: Int = 64 * 1024) throws(SocketError) -> Int {
        var chunk = [UInt8](repeating: 0, count: maximum)
        let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { bytes in
            do throws(Errno) { return .success(try SystemSocket.receive(descriptor, into: bytes)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let count):
            buffer.append(contentsOf: chunk[0..<count])
            return count
        case .failure(let error):
            throw SocketError(call: "recv", code: error, context: "connection \(descriptor)")
        }
    }

    /// Writes all of `bytes` (a short write continues; `SO_SNDTIMEO` bounds
    /// each wait). `dontWait`: send only what fits in the socket's buffer now.
    func write(_ bytes: [UInt8], dontWait: Bool = false) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            let result: Result<Int, Errno> = bytes.withUnsafeBytes { buffer in
                do throws(Errno) {
                    return .success(try SystemSocket.send(descriptor, from: UnsafeRawBufferPointer(rebasing: buffer[offset...]), dontWait: dontWait))
                } catch { return .failure(error) }
            }
            switch result {
            case .success(let count):
                offset += count
            case .failure(let error):
                // EAGAIN here is the send timeout: the client stopped reading.
                throw SocketError(call: "send", code: error, context: "connection \(descriptor)")
            }
        }
    }

    /// Sets the send timeout and turns off Nagle's delay (replies are whole).
    func configure(writeTimeoutMilliseconds: Int) {
        SystemSocket.setSendTimeout(descriptor, milliseconds: writeTimeoutMilliseconds)
        SystemSocket.setNoDelay(descriptor)
    }

    /// Closes after a last answer: stop sending, then read and discard what
    /// the client still sends (briefly), so the kernel does not reset the
    /// connection and destroy the answer before the client has read it.
    func closeAfterAnswer(lingerMilliseconds: Int = 1_000) {
        SystemSocket.shutdown(descriptor, .write)
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
        SystemSocket.close(descriptor)
    }
}
