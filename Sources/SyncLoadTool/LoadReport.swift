/// A finished load run: the configuration, the merged tally and the time it
/// really took, with the rates and the text `sync-load` prints.
public struct LoadReport: Sendable, Hashable {
    /// What was run.
    public var configuration: LoadConfiguration
    /// Every client's counts, merged.
    public var tally: LoadTally
    /// Seconds from the clients' start to the last one's end.
    public var elapsedSeconds: Double
    /// Of the idle connections, how many the server still held at the end (`nil`: none were opened).
    public var idleStillOpen: Int?
    /// The server's memory at the end (`nil`: no `--server-pid`, or unreadable).
    public var serverMemory: ServerMemory?

    /// Pushes per second.
    public var pushesPerSecond: Double { Double(tally.pushes) / elapsedSeconds }
    /// Applied mutations per second.
    public var mutationsPerSecond: Double { Double(tally.mutations) / elapsedSeconds }
    /// Pulls per second.
    public var pullsPerSecond: Double { Double(tally.pulls) / elapsedSeconds }
    /// Pulled rows per second.
    public var rowsPerSecond: Double { Double(tally.rows) / elapsedSeconds }

    /// The report, a few lines.
    public var text: String {
        func rate(_ value: Double) -> String { value >= 100 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10) }
        func milliseconds(_ value: Double?) -> String { value.map { String((($0 * 100).rounded()) / 100) + " ms" } ?? "-" }
        func latency(_ values: [Double]) -> String {
            "p50 \(milliseconds(LoadTally.quantileMilliseconds(values, 0.5))), p99 \(milliseconds(LoadTally.quantileMilliseconds(values, 0.99)))"
        }
        let c = configuration
        var lines = [
            "sync-load: \(c.clients) clients, \(String((elapsedSeconds * 100).rounded() / 100)) s, "
                + (c.batchSize == 0 ? "pulls only (limit \(c.pullLimit))" : "batch \(c.batchSize), \(c.pullsPerPush) pull(s) per push")
                + (c.preloadRows > 0 ? ", \(c.preloadRows) rows preloaded per client" : "") + ", against \(([c.server] + c.moreServers).map(\.absoluteString).joined(separator: ", "))"
                + (c.moreTokens.isEmpty ? "" : " with \(c.moreTokens.count + 1) tokens")
                + (c.client == .plain ? ", plain HTTP client" : ""),
            "pushes    \(tally.pushes) (\(rate(pushesPerSecond))/s), mutations \(tally.mutations) (\(rate(mutationsPerSecond))/s), "
                + "latency \(latency(tally.pushLatencies))",
            "pulls     \(tally.pulls) (\(rate(pullsPerSecond))/s), rows \(tally.rows) (\(rate(rowsPerSecond))/s), "
                + "latency \(latency(tally.pullLatencies))",
            "errors    \(tally.errors)",
        ]
        lines += tally.errorSamples.map { "  \($0)" }
        if let idleStillOpen {
            lines.append("idle      \(c.idleConnections) connections opened before the clock, \(idleStillOpen) still open at the end")
        }
        if let configuredPID = c.serverPID {
            if let serverMemory {
                func mebibytes(_ kib: Int) -> String { String((Double(kib) / 1_024 * 10).rounded() / 10) + " MiB" }
                lines.append("server    pid \(configuredPID): RSS \(mebibytes(serverMemory.residentKiB)), peak RSS \(mebibytes(serverMemory.peakResidentKiB))")
            } else {
                lines.append("server    pid \(configuredPID): no /proc/\(configuredPID)/status to read")
            }
        }
        lines.append("(real time on a real server: numbers vary from run to run and with the machine's other load)")
        return lines.joined(separator: "\n") + "\n"
    }
}
