/// The summary of loop turns the agent logs when it stops (`longest loop turn: …; N turns over
/// 50 ms, M with over 50 ms on the CPU; the most CPU in one turn: X ms of Y ms (what)`), read
/// back: how tests judge "no loop turn over 50 ms". A turn slow on the wall clock only was the
/// machine preempting the agent; a turn over on the CPU was the agent's own work.
public struct LoopTurnSummary: Sendable {
    /// The whole summary line.
    public var line: String
    /// Turns whose own work (CPU time) passed the threshold.
    public var overOnTheCPU: Int
    /// The turn with the most CPU time: its milliseconds and what it did.
    public var mostCPU: (milliseconds: Double, what: String)?

    /// The last summary in `log`; nil when there is none (the agent was not stopped, or died).
    public init?(log: String) {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("longest loop turn: ") }),
              let r = line.range(of: " with over 50 ms on the CPU") else { return nil }
        self.line = String(line)
        overOnTheCPU = Int(line[..<r.lowerBound].split(separator: " ").last ?? "") ?? -1
        if let m = line.range(of: "the most CPU in one turn: ") {
            let rest = line[m.upperBound...]
            if let ms = Double(rest.prefix { $0 != " " }), let open = rest.range(of: " ms (") {
                mostCPU = (ms, String(rest[open.upperBound...].dropLast()))
            }
        }
    }
}
