import SyncJournalPlatform
import SyncJournalServerPlatform

/// One accepted connection's non-blocking descriptor: reads and writes that
/// never wait and never raise `SIGPIPE`.
struct ConnectionSocket: Sendable {
    let descriptor: Int32

    /// What one non-blocking read or write did.
    enum Transfer: Equatable {
        /// This many bytes moved (more than 0).
        case moved(Int)
        /// Nothing now: wait for readiness.
        case wouldBlock
        /// End of file (reads only).
        case endOfFile
        /// A reset or another error: the connection is over.
        case failed(Errno)
    }

    /// Reads what is available into `scratch`.
    func read(into scratch: UnsafeMutableRawBufferPointer) -> Transfer {
        do throws(Errno) {
            let count = try SystemSocket.receive(descriptor, into: scratch)
            return count == 0 ? .endOfFile : .moved(count)
        } catch {
            return error == .wouldBlock ? .wouldBlock : .failed(error)
        }
    }

    /// Writes what fits now of `bytes[offset...]`.
    func write(_ bytes: [UInt8], from offset: Int) -> Transfer {
        bytes.withUnsafeBytes { buffer in
            do throws(Errno) {
                let count = try SystemSocket.send(descriptor, from: UnsafeRawBufferPointer(rebasing: buffer[offset...]), dontWait: true)
                return count == 0 ? .wouldBlock : .moved(count)
            } catch {
                return error == .wouldBlock ? .wouldBlock : .failed(error)
            }
        }
    }
}
