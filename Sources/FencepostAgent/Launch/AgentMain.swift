// `fencepost-agent`'s command line: what its `main.swift` runs, here so that the executable module
// is one call. In Embedded Swift every function body is available to a client module, so the
// executable module would otherwise take in and optimize the whole agent a second time (an extra
// minute per cross-build); `@export(interface)` gives the client only the symbol.
import FencepostLinux
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

/// The agent's command line (`fencepost-agent --help`).
public enum AgentMain {
    /// Runs the command the arguments name (without the program name) and returns the process's
    /// exit status: 0, 1 for a failed algorithm check, 64 for a usage error, 78 for a configuration
    /// that does not check, or the daemon's or `zones build`'s own status.
    ///
    /// - Parameter bench: `--bench`'s cases, timed for about the given seconds each (the
    ///   benchmark harness is a target of its own, which the executable links: no harness in
    ///   the agent's library).
    @export(interface)
    public static func run(_ arguments: [String], bench: (Double) -> Int32) -> Int32 {
        if arguments.count >= 2, arguments[0] == "zones", arguments[1] == "build" {
            return ZoneSetBuildCommand.run(Array(arguments.dropFirst(2)), program: "fencepost-agent")
        }
        switch Result(catching: { () throws(UsageError) in try AgentArguments.parse(arguments) }) {
        case .success(.help):
            try? FileDescriptor.standardOutput.writeAll(AgentArguments.helpText)
            return 0
        case .success(.version):
            try? FileDescriptor.standardOutput.writeAll("\(fencepostVersion)\n")
            return 0
        case .success(.checkAlgorithms(let seed)):
            return AlgorithmCheck.report(seed: seed)
        case .success(.checkConfig(let options)):
            return ConfigCheck.run(options, program: "fencepost-agent")
        case .success(.bench(let seconds)):
            return bench(seconds)
        case .success(.pinTest(let o)):
            return PinTest.run(configPath: o.configPath, console: o.console, pulseMilliseconds: o.pulseMilliseconds, program: "fencepost-agent")
        case .success(.run(let options)):
            return options.run(program: "fencepost-agent")
        case .failure(let error):
            return error.report(program: "fencepost-agent", usage: "fencepost-agent \(RunOptions.synopsis)")
        }
    }
}
