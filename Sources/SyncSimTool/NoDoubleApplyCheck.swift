/// The no-double-apply invariant: the server never applies one operation twice.
extension SimulationRun {
    func checkNoDoubleApply() async {
        statistics.invariantChecks += 1
        let doubles = await log.doubleApplications
        if let first = doubles.first { fail(.noDoubleApply, first) }
    }
}
