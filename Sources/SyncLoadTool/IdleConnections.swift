import SyncJournalPlatform
import SyncJournalServerPlatform

/// Connections to the server that each ask one health check and then stay
/// open and silent, as parked phones do: what a server holding many idle
/// clients pays for them (`sync-load --idle-connections N`).
///
/// ```swift
/// let idle = try IdleConnections.open(count: 2_000, host: "127.0.0.1", port: 8787)
/// // ... the load run ...
/// print(idle.countStillOpen(), "of", idle.count, "still open")
/// idle.close()
/// ```
final class IdleConnections: @unchecked Sendable {
    // @unchecked: `descriptors` is written by open() and close(), on the
    // runner's task, never at the same time as countStillOpen().
    private var descriptors: [Int32]

    private init(descriptors: [Int32]) { self.descriptors = descriptors }

    /// How many are held.
    var count: Int { descriptors.count }

    /// Opens `count` connections, each answered one `GET /v1/health` on a
    /// kept-alive connection; raises this process's open-file limit first.
    ///
    /// - Throws: ``LoadFailure/unreachable(server:reason:)`` naming the
    ///   connection that failed (the ones opened before are closed).
    static func open(count: Int, host: String, port: Int) throws(LoadFailure) -> IdleConnections {
        OpenFileLimit.raiseToHardLimit()
        let request = Array("GET /v1/health HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
        var opened: [Int32] = []
        opened.reserveCapacity(count)
        func fail(_ reason: String) -> LoadFailure {
            for descriptor in opened { SystemSocket.close(descriptor) }
            return .unreachable(server: "\(host):\(port)", reason: "idle connection \(opened.count + 1) of \(count): \(reason)")
        }
        var reply = [UInt8](repeating: 0, count: 4_096)
        // In batches of 50 (under the server's 64 waiting requests of no one
        // user): connect and ask a batch, then read its answers, so the
        // round trips overlap instead of adding up.
        while opened.count < count {
            let batch = opened.count..<min(count, opened.count + 50)
            for _ in batch {
                let descriptor: Int32
                do throws(SocketSetupFailure) { descriptor = try SystemSocket.connectTCP(host: host, port: port) } catch {
                    throw fail("\(error.call): \(SocketSetupFailure.message(call: error.call, code: error.code))")
                }
                opened.append(descriptor)
                SystemSocket.setReceiveTimeout(descriptor, milliseconds: 30_000)
                SystemSocket.setSendTimeout(descriptor, milliseconds: 30_000)
                let sent: Result<Int, Errno> = request.withUnsafeBytes { bytes in
                    do throws(Errno) { return .success(try SystemSocket.send(descriptor, from: bytes)) } catch { return .failure(error) }
                }
                if case .failure(let error) = sent { throw fail("health check: \(error) (\(error.message))") }
            }
            for index in batch {
                let descriptor = opened[index]
                let received: Result<Int, Errno> = reply.withUnsafeMutableBytes { buffer in
                    do throws(Errno) { return .success(try SystemSocket.receive(descriptor, into: buffer)) } catch { return .failure(error) }
                }
                switch received.map({ String(decoding: reply[0..<$0], as: UTF8.self) }) {
                case .success(let text):
                    guard text.hasPrefix("HTTP/1.1 200") else { throw fail("the health check was answered \(text.prefix(40).debugDescription)") }
                case .failure(let error):
                    throw fail("health check: \(error) (\(error.message))")
                }
            }
        }
        return IdleConnections(descriptors: opened)
    }

    /// How many the server has not closed (a read that would wait means open).
    func countStillOpen() -> Int {
        var probe = [UInt8](repeating: 0, count: 64)
        var open = 0
        for descriptor in descriptors {
            SystemSocket.setReceiveTimeout(descriptor, milliseconds: 1)
            let result: Result<Int, Errno> = probe.withUnsafeMutableBytes { buffer in
                do throws(Errno) { return .success(try SystemSocket.receive(descriptor, into: buffer)) } catch { return .failure(error) }
            }
            if case .failure(let error) = result, error == .wouldBlock { open += 1 }
        }
        return open
    }

    /// Closes them all.
    func close() {
        for descriptor in descriptors { SystemSocket.close(descriptor) }
        descriptors = []
    }
}
