// `fencepost-agent`: the daemon alone (`fencepost run` without the CLI), for systemd. It links no
// Foundation and no argument parser, so its resident set is the agent's own (Benchmarks/README.md).
import FencepostAgent
import FencepostLinux
#if canImport(Glibc)
import Glibc
#endif

func write(_ text: String, to fd: FileDescriptor) {
    var text = text
    text.withUTF8 { try? fd.writeAll(UnsafeRawBufferPointer($0)) }
}

switch Result(catching: { () throws(UsageError) in try AgentArguments.parse(Array(CommandLine.arguments.dropFirst())) }) {
case .success(.help):
    write(AgentArguments.helpText, to: .standardOutput)
case .success(.version):
    write("\(fencepostVersion)\n", to: .standardOutput)
case .success(.run(let configPath, let console)):
    exit(AgentLauncher.run(configPath: configPath, console: console, prefix: "fencepost-agent"))
case .failure(let error):
    write("fencepost-agent: \(error)\nUsage: fencepost-agent [--config <file>] [--console]  (see --help)\n", to: .standardError)
    exit(64)
}
