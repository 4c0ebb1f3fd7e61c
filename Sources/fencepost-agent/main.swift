// `fencepost-agent`: the daemon alone (`fencepost run` without the CLI), for systemd. It links no
// Foundation and no argument parser, so its resident set is the agent's own (Benchmarks/README.md).
import FencepostAgent
import FencepostLinux
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

let arguments = Array(processArguments().dropFirst())
if arguments.count >= 2, arguments[0] == "zones", arguments[1] == "build" {
    exit(ZoneSetBuildCommand.run(Array(arguments.dropFirst(2))))
}

switch Result(catching: { () throws(UsageError) in try AgentArguments.parse(arguments) }) {
case .success(.help):
    try? FileDescriptor.standardOutput.writeAll(AgentArguments.helpText)
case .success(.version):
    try? FileDescriptor.standardOutput.writeAll("\(fencepostVersion)\n")
case .success(.selfCheck(let seed)):
    let report = SelfCheck.run(seed: seed)
    for line in report.lines { try? FileDescriptor.standardOutput.writeAll(line + "\n") }
    exit(report.passed ? 0 : 1)
case .success(.checkConfig(let path, let quiet)):
    switch Result(catching: { () throws(AgentConfigurationError) in try ConfigCheck.check(path: path, zones: SystemZones()) }) {
    case .success(let checked):
        if !quiet {
            try? FileDescriptor.standardOutput.writeAll("\(path): OK (\(checked.requestTables) requests, \(checked.configuration.zoneCount ?? 0) zones)\n")
        }
    case .failure(let error):
        try? FileDescriptor.standardError.writeAll("<3>\(error)\n")
        exit(78)
    }
case .success(.bench(let seconds)):
    for line in AgentBench.lines(AgentBench.run(seconds: seconds)) { try? FileDescriptor.standardOutput.writeAll(line + "\n") }
case .success(.run(let configPath, let console)):
    exit(AgentLauncher.run(configPath: configPath, console: console, prefix: "fencepost-agent"))
case .failure(let error):
    try? FileDescriptor.standardError.writeAll("<3>fencepost-agent: \(error)\n<3>Usage: fencepost-agent [--config <file>] [--console]  (see --help)\n")
    exit(64)
}
