/// Writes the records of a checkpoint file as they are made: each is framed
/// into a buffer of a few megabytes, and the buffer goes to the file when it
/// is full. A checkpoint of a large state is hundreds of megabytes; it is
/// never held whole in memory, and each full buffer is written on a second
/// thread while the next one is encoded.
package struct CheckpointFileWriter {
    private let io: FileIO
    private let fd: FileDescriptor
    private let path: String
    private let header: JournalHeader
    /// The new file claims nothing beyond its header until it is complete
    /// and synced, so every record carries this horizon.
    private let horizon: Int64
    private let chunkBytes: Int
    private var chunk: [UInt8]
    private let writeBehind: ChunkWriteBehind
    /// Where the buffer goes in the file.
    private var chunkOffset: Int64
    /// The sequence number of the next record.
    package private(set) var nextSequence: UInt64
    /// Records appended so far.
    package private(set) var recordCount = 0

    init(io: FileIO, fd: FileDescriptor, path: String, header: JournalHeader, chunkBytes: Int = 4 << 20) {
        self.io = io
        self.fd = fd
        self.path = path
        self.header = header
        self.chunkBytes = chunkBytes
        horizon = Int64(header.headerLength)
        nextSequence = header.firstSequence
        let capacity = chunkBytes + JournalFormat.maximumPayloadLength / 8
        chunk = header.encoded()
        chunk.reserveCapacity(capacity)
        writeBehind = ChunkWriteBehind(io: io, fd: fd, path: path, capacity: capacity)
        chunkOffset = 0
    }

    /// The file's length once everything appended is written.
    var endOffset: Int64 { chunkOffset + Int64(chunk.count) }

    /// Appends one record.
    package mutating func append(type: RecordType, payload: [UInt8]) throws(JournalError) {
        if payload.count > JournalFormat.maximumPayloadLength {
            throw .recordTooLarge(bytes: payload.count, maximum: JournalFormat.maximumPayloadLength)
        }
        RecordFrame.encode(type: type, header: header, sequence: nextSequence, horizon: horizon, payload: payload, into: &chunk)
        nextSequence += 1
        recordCount += 1
        if chunk.count >= chunkBytes { try flush() }
    }

    /// Hands what the buffer holds to the writing thread.
    mutating func flush() throws(JournalError) {
        guard !chunk.isEmpty else { return }
        let count = chunk.count
        do throws(SystemError) { try writeBehind.write(&chunk, at: chunkOffset) } catch { throw .io(error) }
        chunkOffset += Int64(count)
    }

    /// Writes everything appended so far and waits until it is in the file
    /// (not yet synced); more records may follow. A checkpoint written
    /// beside a journal in use does this before it syncs the bulk of the
    /// file, so the short step that ends it syncs only what came after.
    mutating func drain() throws(JournalError) {
        try flush()
        do throws(SystemError) { try writeBehind.finish() } catch { throw .io(error) }
    }

    /// Ends the file with a sync-horizon record claiming every record before
    /// it, writes what is left and waits until everything is in the file.
    ///
    /// The closing record is what proves a replacement file complete: one
    /// found under `<journal>.checkpoint` without the journal beside it
    /// (a lost rename) is adopted only when it ends so
    /// (``JournalCheckpointLeftover``). It is written before the file is
    /// synced and renamed, so a journal never carries it unsynced. It takes
    /// a sequence number but is not counted in ``recordCount``.
    mutating func finish() throws(JournalError) {
        RecordFrame.encode(type: .syncHorizon, header: header, sequence: nextSequence, horizon: endOffset, payload: [], into: &chunk)
        nextSequence += 1
        try flush()
        do throws(SystemError) { try writeBehind.finish() } catch { throw .io(error) }
    }

    /// Waits for a write still in flight, before the file is closed and
    /// removed after a failure; its own failure no longer matters.
    func abandon() {
        try? writeBehind.finish()
    }
}
