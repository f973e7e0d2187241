import SyncJournalProtocol
import SyncJournalPlatform

/// The generator behind ``OperationID/random()``: xoshiro256** seeded once
/// per process (and again in a forked child) from the system's generator.
///
/// An operation id has to be unique, not secret. The system generator makes
/// a `getrandom` system call per draw, two per id, which `journal-bench`'s
/// profile of bulk appends showed as about 8 % of an edit's time. 256 bits of
/// seed from the system make a collision between devices as unlikely as with
/// fresh system randomness for each id.
struct OperationIDGenerator: RandomNumberGenerator {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator seeded from `source` (never the all-zero state, which xoshiro cannot leave).
    init(seededBy source: inout some RandomNumberGenerator) {
        repeat {
            s0 = source.next()
            s1 = source.next()
            s2 = source.next()
            s3 = source.next()
        } while s0 | s1 | s2 | s3 == 0
    }

    /// The next 64 bits (xoshiro256**).
    mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, by: 7) &* 9
        let shifted = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= shifted
        s3 = rotateLeft(s3, by: 45)
        return result
    }

    private func rotateLeft(_ value: UInt64, by count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    /// A generator seeded from the system's.
    static func fromSystem() -> OperationIDGenerator {
        var system = SystemRandomNumberGenerator()
        return OperationIDGenerator(seededBy: &system)
    }

    /// The process's generator. A child made by `fork` would continue its
    /// parent's sequence and repeat its ids, so the child reseeds first.
    private static let shared: Mutex<OperationIDGenerator> = {
        SystemProcess.afterForkInChild { forkedSinceSeeding = true }
        return Mutex(fromSystem())
    }()

    /// Runs `body` with the process's generator, reseeded first in a forked child.
    static func withShared<T>(_ body: (inout OperationIDGenerator) -> T) -> T {
        shared.withLock { generator in
            if forkedSinceSeeding {
                forkedSinceSeeding = false
                generator = fromSystem()
            }
            return body(&generator)
        }
    }
}

/// Set in a child process right after `fork`; the next draw reseeds.
/// A plain variable, not a lock: the fork handler runs in the child while it
/// has one thread, where a lock some other parent thread held at the fork
/// would never be released. Read and cleared only under `shared`'s lock.
nonisolated(unsafe) private var forkedSinceSeeding = false
