// `fencepost run`: the agent itself — reads the configuration, opens the state file, the control
// socket, GPIO and the GPS source, and runs the event loop until SIGTERM.
import ArgumentParser
import FencepostAgent

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent: deliver notifications on GPIO, answer the control socket.",
        usage: "fencepost run " + RunOptions.synopsis,
        discussion: """
            The daemon. systemd starts it (board/fencepost.service, Type=notify); on any machine \
            the demo runs it on a recorded drive with console GPIO:

              fencepost run --config board/demo/fencepost.toml

            It reads the configuration (check it first with `fencepost check-config FILE`), \
            restores the pending and delivered notifications from the state file — applying each \
            request's missed-fire policy to what fell due while it was down — applies the \
            requests and categories of the configuration (idempotently: unchanged ones keep their \
            progress), and then sleeps in one epoll loop until a timer, a fix, the button or the \
            control socket wakes it. Every change is committed to the state file before the \
            buzzer sounds.

            Signals: TERM or INT stop it (outputs off, exit 0); HUP reloads the configuration \
            (a broken file is logged with its line, and the running configuration is kept).

            With the console backend each pin change is a line on standard output:

              +12.345 s  buzzer (BCM 18) on

            The same agent without the CLI around it is `fencepost-agent` (smaller in memory: \
            what the systemd unit starts).

            Exit status: 0 stopped by a signal or the replay ended, 1 the event loop failed, 64 \
            usage, 65 the replay log is not a GPS log, 66 the replay log cannot be read, 69 GPIO \
            or libgps unavailable (no such chip: use gpio.backend = "console"), 73 the state file \
            or the socket cannot be created, 74 the state file cannot be written, 78 a \
            configuration error (FILE:LINE: message) or the configuration file cannot be read.
            """
    )

    /// The options are ``RunOptions``' (FencepostAgent), the parser `fencepost-agent` uses: they go
    /// to it as given, and this type only puts its help into `fencepost run --help`.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp(
        "-c, --config <file>: the configuration file (TOML; default /etc/fencepost/fencepost.toml). --console: print pin changes on standard output instead of driving GPIO (whatever the file says).",
        valueName: "options"))
    var arguments: [String] = []

    func run() throws {
        let code = RunOptions.run(arguments, program: "fencepost run")
        if code != 0 { throw ExitCode(code) }
    }
}
