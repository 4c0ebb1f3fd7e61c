// The process's command line. The normal build has `CommandLine.arguments`; Embedded Swift's
// stdlib has no CommandLine, so there the arguments come from a C constructor that glibc hands
// argc and argv (CFencepostLinux/embedded.c).
#if hasFeature(Embedded)
import CFencepostLinux
#endif

/// The process's arguments, the program name first (`CommandLine.arguments`).
public func processArguments() -> [String] {
    #if hasFeature(Embedded)
    guard let argv = cfl_argv() else { return [] }
    var arguments: [String] = []
    for i in 0 ..< Int(cfl_argc()) {
        if let p = argv[i] { arguments.append(String(cString: p)) }
    }
    return arguments
    #else
    return CommandLine.arguments
    #endif
}
