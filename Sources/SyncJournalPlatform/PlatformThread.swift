#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A joinable POSIX thread running one closure: for work that must not run
/// on the Swift concurrency pool (a sampler that blocks between readings).
package final class PlatformThread: @unchecked Sendable {
    // @unchecked: `handle` is written once by `start` and read by `join`,
    // both on the thread that owns this object.
    #if canImport(Darwin)
    private var handle: pthread_t?
    #else
    private var handle = pthread_t()
    #endif
    private var started = false

    /// Held while a thread is created (see ``start(_:)``).
    private static let creation = Mutex(())

    private init() {}

    /// Starts `body` on a new thread; `nil` if the thread could not be created.
    package static func start(_ body: @escaping @Sendable () -> Void) -> PlatformThread? {
        let thread = PlatformThread()
        let box = Unmanaged.passRetained(BodyBox(body))
        // One thread is created at a time in this process: on a loaded Linux
        // machine, two creations at once were seen stuck inside `clone3`
        // together for good, both creators and both new threads.
        let result = creation.withLock { _ in pthread_create(&thread.handle, nil, { context in
            #if canImport(Darwin)
            let box = Unmanaged<BodyBox>.fromOpaque(context).takeRetainedValue()
            #else
            let box = Unmanaged<BodyBox>.fromOpaque(context!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, box.toOpaque()) }
        guard result == 0 else {
            box.release()
            return nil
        }
        thread.started = true
        return thread
    }

    /// Waits for the thread's closure to return.
    package func join() {
        guard started else { return }
        started = false
        #if canImport(Darwin)
        if let handle { pthread_join(handle, nil) }
        #else
        pthread_join(handle, nil)
        #endif
    }

    /// Lets the thread end on its own, never joined: for a thread whose owner
    /// may be released on that very thread (which cannot join itself).
    package func detach() {
        guard started else { return }
        started = false
        #if canImport(Darwin)
        if let handle { pthread_detach(handle) }
        #else
        pthread_detach(handle)
        #endif
    }

    /// An identifier of the calling thread, unique among running threads.
    package static func currentIdentifier() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    private final class BodyBox {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
