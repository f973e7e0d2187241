import Foundation

/// A process's memory as Linux reports it in `/proc/PID/status`
/// (`sync-load --server-pid PID`): the resident set now and its peak.
///
/// ```swift
/// if let memory = ServerMemory.read(pid: 1234) { print(memory.residentKiB) }
/// ```
public struct ServerMemory: Sendable, Hashable {
    /// `VmRSS`: resident memory now, in KiB.
    public var residentKiB: Int
    /// `VmHWM`: the most resident memory so far, in KiB.
    public var peakResidentKiB: Int

    /// Creates the figures (in KiB).
    public init(residentKiB: Int, peakResidentKiB: Int) {
        self.residentKiB = residentKiB
        self.peakResidentKiB = peakResidentKiB
    }

    /// The figures of process `pid`, or `nil` where `/proc` has none (no such process, not Linux).
    public static func read(pid: Int32) -> ServerMemory? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return parse(status: text)
    }

    /// The figures in a `/proc/PID/status` text, or `nil` if it lacks `VmRSS`.
    ///
    /// ```swift
    /// ServerMemory.parse(status: "VmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n")?.residentKiB   // 1024
    /// ```
    public static func parse(status text: String) -> ServerMemory? {
        func field(_ name: String) -> Int? {
            for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
                let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
                return Int(digits)
            }
            return nil
        }
        guard let resident = field("VmRSS") else { return nil }
        return ServerMemory(residentKiB: resident, peakResidentKiB: field("VmHWM") ?? resident)
    }
}
