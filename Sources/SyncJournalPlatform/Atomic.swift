/// How an ``Atomic`` access is ordered against other memory accesses, with
/// the Synchronization module's names. Every access of this package's
/// ``Atomic`` is sequentially consistent (it takes a lock), so the ordering
/// only documents what the caller needs.
package struct AtomicOrdering: Sendable, Hashable {
    private let name: String

    /// No ordering beyond the access itself (counters, flags polled in a loop).
    package static let relaxed = AtomicOrdering(name: "relaxed")
    /// Later accesses stay after this one.
    package static let acquiring = AtomicOrdering(name: "acquiring")
    /// Earlier accesses stay before this one.
    package static let releasing = AtomicOrdering(name: "releasing")
    /// Both of the above.
    package static let acquiringAndReleasing = AtomicOrdering(name: "acquiringAndReleasing")
    /// One total order over every such access.
    package static let sequentiallyConsistent = AtomicOrdering(name: "sequentiallyConsistent")
}

/// A value read and written whole from several threads, with the
/// Synchronization module's `Atomic` interface for the operations this
/// package uses (`load`, `store`, `exchange`, `add`).
///
/// Synchronization's `Atomic` needs iOS 18 and macOS 15; the package declares
/// iOS 17 and macOS 14, so this one is a ``Mutex`` underneath. Never use it
/// where a lock may not be taken (a `fork` handler): there a plain variable
/// written only by the single-threaded child is the safe choice.
package final class Atomic<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    /// Holds `initialValue`.
    package init(_ initialValue: Value) { storage = Mutex(initialValue) }

    /// The current value.
    package func load(ordering: AtomicOrdering) -> Value { storage.withLock { $0 } }

    /// Replaces the value.
    package func store(_ desired: Value, ordering: AtomicOrdering) { storage.withLock { $0 = desired } }

    /// Replaces the value and returns the one it replaced.
    package func exchange(_ desired: Value, ordering: AtomicOrdering) -> Value {
        storage.withLock { value in
            let old = value
            value = desired
            return old
        }
    }
}

extension Atomic where Value: FixedWidthInteger {
    /// Adds `operand` (wrapping on overflow) and returns the values before and after.
    @discardableResult
    package func add(_ operand: Value, ordering: AtomicOrdering) -> (oldValue: Value, newValue: Value) {
        storage.withLock { value in
            let old = value
            value = old &+ operand
            return (old, value)
        }
    }
}
