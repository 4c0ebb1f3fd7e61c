// `fencepost-agent`: the daemon alone (`fencepost run` without the CLI), for systemd. It links no
// Foundation and no argument parser, so its resident set is the agent's own (Benchmarks/README.md).
// The command line is `AgentMain` (FencepostAgent/Launch/AgentMain.swift).
import FencepostAgent
import FencepostBenchHarness
import FencepostLinux
#if canImport(Glibc)
import Glibc
#elseif hasFeature(Embedded)
import CFencepostLinux
#endif

exit(AgentMain.run(Array(processArguments().dropFirst()), bench: { AgentBench.run(seconds: $0) }))
