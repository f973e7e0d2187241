import Foundation

/// Runs each body on a thread of its own, all at once, and returns when
/// every one has finished (a dispatch group, not a timed wait). Real threads,
/// not `concurrentPerform`: a body that waits for another must not be queued
/// behind it on a busy two-core machine.
enum ConcurrentThreads {
    static func run(_ bodies: [@Sendable () -> Void]) {
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            let thread = Thread {
                body()
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }
}
