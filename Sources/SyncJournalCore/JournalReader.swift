/// Reads and verifies a journal file, streaming: memory stays bounded by the
/// largest record whatever the file's size.
///
/// The reader never changes the file. It classifies it as clean, torn tail or
/// corrupt (``JournalStatus``) and hands every valid record of the valid
/// prefix to a closure, in order.
///
/// ```swift
/// let report = try JournalReader(path: "journals/samples/healthy.journal").scan { record in
///     print(record.sequence, record.type)
/// }
/// print(report.status)   // clean
/// ```
package struct JournalReader: Sendable {
    /// The journal's path.
    package let path: String
    /// The system-call layer used for every read.
    package let system: any SystemCalls
    /// Whether the caller understands a record type that is not skippable;
    /// the first verified record of a type it does not understand ends the
    /// scan with ``JournalStatus/unsupported(offset:reason:)``. `nil`: every
    /// type is understood (the core itself interprets no payload).
    package let understands: (@Sendable (RecordType) -> Bool)?

    /// A reader of the journal at `path`.
    package init(path: String, system: any SystemCalls = PosixSystemCalls(),
                understands: (@Sendable (RecordType) -> Bool)? = nil) {
        self.path = path
        self.system = system
        self.understands = understands
    }

    /// Verifies the whole file and calls `visit` for each valid record of the
    /// valid prefix.
    ///
    /// Throws ``JournalError/notAJournal(path:)`` and
    /// ``JournalError/unsupportedVersion(path:major:minor:)`` for files it must
    /// not interpret, ``JournalError/io(_:)`` for read errors (never taken for
    /// damage), and whatever `visit` throws. Damage is not thrown: it is the
    /// report's ``JournalScanReport/status``.
    package func scan(_ visit: (JournalRecord) throws -> Void = { _ in }) throws -> JournalScanReport {
        try withScanner { scanner in try scanner.run(visit) }
    }

    /// Opens the file read-only and runs `body` with a scanner over it.
    func withScanner<T>(_ body: (inout JournalScanner) throws -> T) throws -> T {
        let fd: FileDescriptor
        do { fd = try system.open(path, .readOnly, 0) } catch { throw JournalError.io(error.at(path)) }
        defer { try? system.close(fd) }
        var scanner: JournalScanner
        do { scanner = try JournalScanner(io: FileIO(system), fd: fd, path: path, understands: understands) } catch { throw JournalError.io(error) }
        return try body(&scanner)
    }

    /// Reads and verifies only the file header: `nil` when the header is
    /// damaged (``scan(_:)`` reports how), and the same errors as ``scan(_:)``
    /// for a file that is not a journal this reader can interpret.
    package func header() throws -> JournalHeader? {
        let io = FileIO(system)
        let fd: FileDescriptor
        do { fd = try system.open(path, .readOnly, 0) } catch { throw JournalError.io(error.at(path)) }
        defer { try? system.close(fd) }
        let bytes: [UInt8]
        do { bytes = try io.read(fd, count: JournalFormat.maximumHeaderLength, at: 0, path: path) } catch { throw JournalError.io(error) }
        do {
            return try JournalHeader.decode(bytes)
        } catch {
            switch error {
            case .badMagic: throw JournalError.notAJournal(path: path)
            case .unsupportedVersion(let major, let minor): throw JournalError.unsupportedVersion(path: path, major: major, minor: minor)
            default: return nil
            }
        }
    }

    /// Verifies the file and returns the report with every valid record.
    /// Memory grows with the file; meant for tests and small journals.
    package func readAll() throws -> (report: JournalScanReport, records: [JournalRecord]) {
        var records: [JournalRecord] = []
        let report = try scan { records.append($0) }
        return (report, records)
    }

    /// The valid records of this generation found **after** the damage of a
    /// torn or corrupt journal (each verified on its own), for salvage and
    /// inspection. Empty for a clean journal.
    package func recordsAfterDamage() throws -> [JournalRecord] {
        try withScanner { scanner in
            let report = try scanner.run { _ in }
            guard let offset = report.status.damageOffset, let header = report.header else { return [] }
            return try scanner.validRecords(after: offset, header: header, expectedSequence: report.nextSequence)
        }
    }
}

