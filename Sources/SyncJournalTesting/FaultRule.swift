import SyncJournalCore

/// One fault to inject: on which system call, on which file, on which of the
/// matching calls, and what happens then.
///
/// ```swift
/// // The second fdatasync of the journal fails with EIO.
/// let rule = FaultRule(call: .fdatasync, target: .path(path), schedule: .nthCall(2), fault: .ioError)
/// faults.inject(rule)
/// ```
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    /// The kind of system call the rule applies to. ``SystemCall/fstat`` is
    /// ``SystemCalls/fileSize(_:)``, ``SystemCall/flock`` is
    /// ``SystemCalls/lockExclusive(_:)``.
    public var call: SystemCall
    /// The files it applies to.
    public var target: TargetFile
    /// Which matching calls it fires on.
    public var schedule: FaultSchedule
    /// What happens when it fires.
    public var fault: InjectedFault

    /// A rule that makes `fault` happen on the calls of kind `call` on
    /// `target` that `schedule` selects.
    ///
    /// - Precondition: ``InjectedFault/partialTransfer(bytes:)`` is only
    ///   given for ``SystemCall/pread`` or ``SystemCall/pwrite``, with a byte
    ///   count of at least 0.
    public init(call: SystemCall, target: TargetFile = .any, schedule: FaultSchedule = .nthCall(1), fault: InjectedFault) {
        if case .partialTransfer(let bytes) = fault {
            precondition(call == .pread || call == .pwrite, "a partial transfer only applies to pread and pwrite, not \(call)")
            precondition(bytes >= 0, "a partial transfer needs a byte count of at least 0")
        }
        if case .tornWrite(let bytes, _) = fault {
            precondition(bytes >= 0, "a torn write needs a byte count of at least 0")
        }
        self.call = call
        self.target = target
        self.schedule = schedule
        self.fault = fault
    }

    /// A short explanation, such as `pwrite on any file, call 1: fail(errno 28)`.
    public var description: String { "\(call.rawValue) on \(target), \(schedule): \(fault)" }
}
