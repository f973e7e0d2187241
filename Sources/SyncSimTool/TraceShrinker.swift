/// Shortens a failing run's trace: replays it with chunks of steps removed
/// and keeps each removal after which the run still breaks the same invariant.
enum TraceShrinker {
    /// Removes chunks of steps (halves, quarters, … single steps) while the
    /// run still fails with the same invariant.
    static func shrink(_ configuration: SimulationConfiguration, trace: [SimulationStep],
                       violation: SimulationViolation) async -> ([SimulationStep], SimulationViolation, Int) {
        var best = trace
        var bestViolation = violation
        var runs = 0
        var chunk = max(1, best.count / 2)
        while runs < configuration.shrinkBudget {
            var index = 0
            var removedAny = false
            while index < best.count && runs < configuration.shrinkBudget {
                var candidate = best
                candidate.removeSubrange(index..<min(best.count, index + chunk))
                runs += 1
                var replayConfiguration = configuration
                replayConfiguration.steps = candidate.count
                let result = await SimulationRun.execute(replayConfiguration, replay: candidate)
                if let found = result.violation, found.invariant == violation.invariant {
                    best = Array(candidate.prefix(found.step))
                    bestViolation = found
                    removedAny = true
                } else {
                    index += chunk
                }
            }
            if chunk == 1 && !removedAny { break }
            chunk = max(1, chunk / 2)
        }
        return (best, bestViolation, runs)
    }
}
