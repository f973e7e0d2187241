import Foundation
/// What `sync-load --live-latency N` measured: for each edit on device A,
/// the time from the edit call until device B's observed query showed it.
///
/// ```swift
/// let report = LiveLatencyReport(latencies: [0.012, 0.015], server: "http://127.0.0.1:8787", editCoalescingMilliseconds: 0)
/// print(report.text, terminator: "")
/// ```
public struct LiveLatencyReport: Sendable, Hashable {
    /// Each edit's latency in seconds, in edit order.
    public var latencies: [Double]
    /// The server measured.
    public var server: String
    /// How long device A's engine waited after an edit before pushing it.
    public var editCoalescingMilliseconds: Int64

    /// A report of `latencies`.
    public init(latencies: [Double], server: String, editCoalescingMilliseconds: Int64) {
        self.latencies = latencies
        self.server = server
        self.editCoalescingMilliseconds = editCoalescingMilliseconds
    }

    /// The `fraction` quantile in milliseconds (nearest rank), `nil` with no edits.
    public func milliseconds(_ fraction: Double) -> Double? { LoadTally.quantileMilliseconds(latencies, fraction) }

    /// The lines the tool prints.
    public var text: String {
        func format(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "-" }
        return """
            live latency against \(server): \(latencies.count) edits on device A, each awaited in device B's observed query
            (B: started, waiting for changes, no idle pulls; A: pushes \(editCoalescingMilliseconds) ms after an edit)
            p50 \(format(milliseconds(0.5)))  p95 \(format(milliseconds(0.95)))  max \(format(milliseconds(1)))

            """
    }
}
