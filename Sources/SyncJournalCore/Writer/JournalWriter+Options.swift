extension JournalWriter {
    /// How appends reach the disk.
    package enum Mode: Sendable, Hashable {
        /// Each append is written and `fdatasync`ed on its own before it returns.
        case durable
        /// Concurrent appends share one write and one `fdatasync`; each still
        /// returns only once its own record is durable.
        case groupCommit
        /// Appends are buffered and written in large writes without syncing;
        /// nothing is durable until ``JournalWriter/sync()`` or
        /// ``JournalWriter/close()`` returns. A write error is final here (the
        /// buffered records already have sequence numbers) and surfaces at the
        /// next call. For tests and imports.
        case bulk
    }

    /// Options for ``JournalWriter/open(path:options:)``.
    package struct Options: Sendable {
        /// How appends reach the disk.
        package var mode: Mode
        /// The system-call layer (a fault injector in tests).
        package var system: any SystemCalls
        /// Create the journal if it does not exist.
        package var createIfMissing: Bool
        /// The header to use when creating (tests and samples fix ids and times).
        package var headerForNewJournal: (@Sendable () -> JournalHeader)?
        /// Called with each valid record, in order, by the scan that opening
        /// does anyway, so a caller that rebuilds state from the journal does
        /// not read the file a second time. (A corrupt journal still fails the
        /// open after some records were visited.)
        package var visitRecord: (@Sendable (JournalRecord) -> Void)?
        /// How far ahead of its appends the writer extends the file with
        /// zeros, in bytes, rounded up to a multiple of 4 KiB. Appends never
        /// extend the file themselves, so a size a power cut leaves is always
        /// a multiple of 4 KiB (format 2.2's closed-end rule). 0: never, and
        /// the file grows with each write; a journal this writer creates is
        /// then of minor version 0, without the closed-end rule, and a 2.2
        /// journal it opens still grows 4 KiB at a time.
        ///
        /// An append into space that is already allocated and written leaves
        /// the file's size alone, so its `fdatasync` flushes data only and
        /// skips the file system's metadata journal: on ext4 that made a
        /// durable append about 1.4 times as fast (`journal-bench`). Readers
        /// take a zero-filled tail for the clean end of the journal, and
        /// ``JournalWriter/close()`` cuts it off.
        ///
        /// ```swift
        /// var options = JournalWriter.Options()
        /// options.preallocationBytes = 4 << 20   // extend 4 MiB at a time
        /// ```
        package var preallocationBytes: Int
        /// Whether the caller understands a record type that is not
        /// skippable. A journal holding a verified record of a type it does
        /// not understand (or with reserved bits set) was written by a newer
        /// version: opening it fails with
        /// ``JournalError/unsupported(path:offset:reason:)`` and nothing is
        /// cut or appended. `nil`: every type is understood.
        package var understands: (@Sendable (RecordType) -> Bool)?
        /// Whether opening a 1.x journal leaves it in 1.x until
        /// ``JournalWriter/moveToCurrentFormat()`` is called, instead of
        /// moving it to format 2 right away: for a caller that checks the
        /// records first and must leave a file it refuses as it was (a store).
        package var defersFormatMove = false

        /// Default options: durable appends, real system calls, create if
        /// missing, 1 MiB of preallocated space at a time.
        package init(mode: Mode = .durable, system: any SystemCalls = PosixSystemCalls(), createIfMissing: Bool = true,
                    headerForNewJournal: (@Sendable () -> JournalHeader)? = nil,
                    visitRecord: (@Sendable (JournalRecord) -> Void)? = nil,
                    preallocationBytes: Int = 1 << 20,
                    understands: (@Sendable (RecordType) -> Bool)? = nil) {
            self.mode = mode
            self.system = system
            self.createIfMissing = createIfMissing
            self.headerForNewJournal = headerForNewJournal
            self.visitRecord = visitRecord
            self.preallocationBytes = max(0, preallocationBytes)
            self.understands = understands
        }
    }
}
