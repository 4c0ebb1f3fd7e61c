import FencepostTestSupport
import Foundation
import Testing

/// The board's files: the unit (systemd-analyze verify and security), the udev rule, the install
/// and uninstall scripts (dry runs), the help the example config points at, check-config's counts
/// and quiet mode, and the exit codes `--help` promises.
@Suite(.processes) struct BoardSetupTests {
    static let board = AgentProcess.root.appendingPathComponent("board")

    static func tool(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/bin/\(name)", "/usr/sbin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a program (not the CLI) through ChildProcess.run; standard output and error together.
    static func exec(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let o = try ChildProcess.run(arguments, environment: environment, executable: URL(fileURLWithPath: path))
        return (o.status, o.stdout + o.stderr)
    }

    /// The unit with its binaries pointing at this build (verify checks that they exist).
    static func unitCopy() throws -> URL {
        guard let cli = ChildProcess.binary, let agent = ChildProcess.agentBinary else { throw ChildProcess.NotFound() }
        var text = try String(contentsOf: board.appendingPathComponent("fencepost.service"), encoding: .utf8)
        text = text.replacingOccurrences(of: "/usr/local/bin/fencepost-agent", with: agent.path)
            .replacingOccurrences(of: "/usr/local/bin/fencepost ", with: cli.path + " ")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent("fencepost.service")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func unitPassesSystemdAnalyzeVerify() throws {
        guard let analyze = RequiredTool.find("systemd-analyze", package: "systemd") else { return }
        let unit = try Self.unitCopy()
        defer { try? FileManager.default.removeItem(at: unit.deletingLastPathComponent()) }
        let r = try Self.exec(analyze, ["verify", "--man=no", unit.path])
        #expect(r.status == 0, "\(r.output)")
        // Nothing about our unit (other units of the machine may warn).
        #expect(!r.output.contains("fencepost.service:"), "\(r.output)")
    }

    @Test func unitScoresAtMostTwoInSystemdAnalyzeSecurity() throws {
        guard let analyze = RequiredTool.find("systemd-analyze", package: "systemd") else { return }
        let unit = try Self.unitCopy()
        defer { try? FileManager.default.removeItem(at: unit.deletingLastPathComponent()) }
        let r = try Self.exec(analyze, ["security", "--offline=yes", "--no-pager", unit.path])
        guard let line = r.output.split(separator: "\n").first(where: { $0.contains("Overall exposure level") }),
              let colon = line.lastIndex(of: ":") else {
            Issue.record("no overall exposure line in:\n\(r.output)")
            return
        }
        let score = Double(line[line.index(after: colon)...].split(separator: " ").first ?? "")
        #expect(score != nil && score! <= 2.0, "\(line)")
    }

    @Test func unitAllowsUSBReceiversAndChecksTheFileBeforeAReload() throws {
        let unit = try String(contentsOf: Self.board.appendingPathComponent("fencepost.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        for device in ["char-ttyACM", "char-ttyUSB", "char-gpiochip", "/dev/serial0"] {
            #expect(lines.contains("DeviceAllow=\(device) rw"), "no DeviceAllow for \(device)")
        }
        let reload = lines.filter { $0.hasPrefix("ExecReload=") }
        #expect(reload.first == "ExecReload=/usr/local/bin/fencepost-agent --check-config --quiet --config /etc/fencepost/fencepost.toml")
        #expect(reload.count == 2, "\(reload)")
        for key in ["ProtectProc=invisible", "ProcSubset=pid", "IPAddressDeny=any", "IPAddressAllow=localhost"] {
            #expect(lines.contains(key), "missing \(key)")
        }
    }

    /// The unit's signalling ExecReload= works on a minimal Debian, which has no procps (no
    /// /bin/kill: a reload through it fails with 203/EXEC): run as systemd runs it (`$$` is a literal `$`,
    /// MAINPID in the environment) with a PATH that holds no kill program, it makes a real agent
    /// read its configuration again.
    @Test func reloadSignalNeedsNoProcps() throws {
        let unit = try String(contentsOf: Self.board.appendingPathComponent("fencepost.service"), encoding: .utf8)
        let signalling = try #require(unit.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("ExecReload=") }.last, "no ExecReload=")
        // systemd's quoting for this one line: /bin/sh -c '…'.
        let prefix = "ExecReload=/bin/sh -c '"
        #expect(signalling.hasPrefix(prefix) && signalling.hasSuffix("'"), "\(signalling)")
        guard signalling.hasPrefix(prefix), signalling.hasSuffix("'") else { return }
        let script = String(signalling.dropFirst(prefix.count).dropLast()).replacingOccurrences(of: "$$", with: "$")
        #expect(!script.contains("/bin/kill") && !script.contains("/usr/bin/kill"), "\(script)")

        let d = try AgentProcess()
        try d.writeConfig(DaemonTests.gpio)
        try d.start(agent: true)
        #expect(d.waitForLog("running:"), "log:\n\(d.stderr)")
        let pid = try #require(d.process?.pid)
        let empty = d.dir.appendingPathComponent("empty-path").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let r = try Self.exec("/bin/sh", ["-c", script], environment: ["MAINPID": "\(pid)", "PATH": empty])
        #expect(r.status == 0, "\(r.output)")
        #expect(d.waitForLog("configuration reloaded"), "log:\n\(d.stderr)")
        d.signal(SIGTERM)
        #expect(d.waitForExit(timeout: 10)?.status == 0)
    }

    @Test func udevRuleGivesGPIOChipsToGroupGPIO() throws {
        let path = Self.board.appendingPathComponent("60-fencepost-gpio.rules").path
        let rule = try String(contentsOfFile: path, encoding: .utf8)
        let active = rule.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(active == [#"SUBSYSTEM=="gpio", KERNEL=="gpiochip[0-9]*", GROUP="gpio", MODE="0660""#])
        if let udevadm = Self.tool("udevadm"), try Self.exec(udevadm, ["verify", "--help"]).status == 0 {
            let r = try Self.exec(udevadm, ["verify", path])
            #expect(r.status == 0, "\(r.output)")
        } else {
            print("udevadm verify not available (systemd < 253): the rule's text is checked only")
        }
    }

    @Test func installDryRunOnABoard() throws {
        let r = try Self.exec("/bin/sh", [Self.board.appendingPathComponent("install").path, "--dry-run", "--no-build"],
                              environment: ["SUDO_USER": "pi"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("install-deps --runtime"), "\(r.output)")
        #expect(r.output.contains("usermod --append --groups fencepost pi"), "\(r.output)")
        #expect(r.output.contains("/etc/udev/rules.d/60-fencepost-gpio.rules"), "\(r.output)")
        #expect(r.output.contains("--generate-completion-script bash"), "\(r.output)")
        let quiet = try Self.exec("/bin/sh", [Self.board.appendingPathComponent("install").path, "--dry-run", "--no-build", "--no-completions"])
        #expect(!quiet.output.contains("+ /usr/local/bin/fencepost --generate-completion-script"), "\(quiet.output)")
        #expect(quiet.output.contains("completions skipped"), "\(quiet.output)")
        // The runtime set has no headers and no test tools.
        let deps = try String(contentsOf: Self.board.appendingPathComponent("install-deps"), encoding: .utf8)
        let runtime = try #require(deps.split(separator: "\n").first { $0.contains("--runtime) PACKAGES=") })
        #expect(!runtime.contains("-dev") && !runtime.contains("strace") && !runtime.contains("gpsd-clients"), "\(runtime)")
        #expect(deps.contains("librsvg2-bin"))
    }

    /// A fresh Debian machine: dpkg lists none of the packages. `.ci/run` runs the README's test
    /// command, whose `board/install-deps` must then apt-get install the -dev packages and gpsd
    /// (fake `dpkg-query` and `apt-get` first on PATH record what it asks for), install nothing
    /// the second time, and fail naming the packages apt could not install.
    @Test func installDepsInstallsTheHeadersAndGpsdOnAFreshMachine() throws {
        let ci = try String(contentsOf: AgentProcess.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        let readme = try String(contentsOf: AgentProcess.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(ci.contains("\nboard/install-deps && swift test\n"), "\(ci)")
        #expect(readme.contains("\nboard/install-deps && swift test\n"))

        let fakes = try FakePrograms("fp-fresh")
        defer { fakes.remove() }
        let dir = fakes.dir, bin = fakes.bin
        let installed = dir.appendingPathComponent("installed").path, calls = dir.appendingPathComponent("calls").path
        // dpkg-query -W -f=FORMAT PACKAGE: "installed" only for what the fake apt-get installed.
        try fakes.script("dpkg-query", "for p; do :; done; grep -qx \"$p\" '\(installed)' 2>/dev/null && printf installed && exit 0; exit 1\n")
        // apt-get: records the call; `install` installs its arguments unless FAIL is set.
        try fakes.script("apt-get", """
            echo "$*" >> '\(calls)'
            if [ "$1" = install ] && [ -z "${FAIL:-}" ]; then for a; do case $a in -*|install) ;; *) echo "$a" >> '\(installed)' ;; esac; done; fi
            exit 0

            """)
        // sudo, for a run as another user: runs the command as is.
        try fakes.script("sudo", "exec \"$@\"\n")
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let deps = Self.board.appendingPathComponent("install-deps").path

        // .ci/run stops after the install when a package is still absent: --check names them, installs nothing.
        #expect(ci.contains("\nboard/install-deps --check\n"), "\(ci)")
        let absent = try Self.exec("/bin/sh", [deps, "--check"], environment: ["PATH": path])
        #expect(absent.status == 1 && absent.output.contains("not installed:") && absent.output.contains(" libgpiod-dev")
                && absent.output.contains(" libgps-dev") && absent.output.contains(" gpsd"), "\(absent.output)")
        #expect(!FileManager.default.fileExists(atPath: calls), "--check called apt-get")

        let failed = try Self.exec("/bin/sh", [deps], environment: ["PATH": path, "FAIL": "1"])
        #expect(failed.status == 1, "\(failed.output)")
        #expect(failed.output.contains("still not installed:") && failed.output.contains(" libgpiod-dev"), "\(failed.output)")

        try? FileManager.default.removeItem(atPath: calls)
        let first = try Self.exec("/bin/sh", [deps], environment: ["PATH": path])
        #expect(first.status == 0, "\(first.output)")
        let asked = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
        let install = try #require(asked.split(separator: "\n").first { $0.hasPrefix("install ") }, "apt-get calls:\n\(asked)")
        let packages = Set(install.split(separator: " ").map(String.init))
        for p in ["libgpiod-dev", "libgps-dev", "gpsd", "gpsd-clients", "libsqlite3-dev", "tzdata", "strace"] {
            #expect(packages.contains(p), "\(p) not in: \(install)")
        }
        #expect(asked.hasPrefix("update"), "apt-get calls:\n\(asked)")
        let present = try Self.exec("/bin/sh", [deps, "--check"], environment: ["PATH": path])
        #expect(present.status == 0 && present.output.isEmpty, "\(present.output)")

        try? FileManager.default.removeItem(atPath: calls)
        let again = try Self.exec("/bin/sh", [deps], environment: ["PATH": path])
        #expect(again.status == 0 && again.output.isEmpty, "\(again.output)")
        #expect(!FileManager.default.fileExists(atPath: calls), "a second run called apt-get")
    }

    /// The emulated board's Debian system (board/vm's ROOTFS_PACKAGES) holds every package that
    /// `board/install-deps --runtime` installs: the guest has no network, so `board/install --binary`
    /// fails there on any runtime package the image lacks. What `--runtime` installs is what it asks
    /// a fake `apt-get` for on a machine where a fake `dpkg-query` lists nothing as installed.
    @Test func emulatedBoardsSystemHoldsTheRuntimePackages() throws {
        let vm = try String(contentsOf: Self.board.appendingPathComponent("vm"), encoding: .utf8)
        let assignments = vm.split(separator: "\n").filter { $0.hasPrefix("ROOTFS_PACKAGES=\"") && $0.hasSuffix("\"") }
        #expect(assignments.count == 1, "board/vm: expected one line ROOTFS_PACKAGES=\"...\", found \(assignments)")
        let rootfs = Set((assignments.first ?? "").dropFirst("ROOTFS_PACKAGES=\"".count).dropLast().split(separator: " ").map(String.init))
        #expect(rootfs.contains("systemd"), "board/vm ROOTFS_PACKAGES: \(rootfs.sorted())")

        let fakes = try FakePrograms("fp-runtime")
        defer { fakes.remove() }
        let dir = fakes.dir, bin = fakes.bin
        let calls = dir.appendingPathComponent("calls").path
        try fakes.script("dpkg-query", "exit 1\n")
        try fakes.script("apt-get", "echo \"$*\" >> '\(calls)'\n")
        try fakes.script("sudo", "exec \"$@\"\n")
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let r = try Self.exec("/bin/sh", [Self.board.appendingPathComponent("install-deps").path, "--runtime"], environment: ["PATH": path])
        #expect(r.status == 1, "the fake apt-get installs nothing:\n\(r.output)")
        let asked = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
        let install = try #require(asked.split(separator: "\n").first { $0.hasPrefix("install ") }, "apt-get calls:\n\(asked)")
        let runtime = Set(install.split(separator: " ").dropFirst().filter { !$0.hasPrefix("-") }.map(String.init))
        #expect(runtime.contains("libgpiod2") && runtime.contains("tzdata"), "install-deps --runtime asked for: \(install)")
        let lacking = runtime.subtracting(rootfs).sorted()
        #expect(lacking.isEmpty, "board/install-deps --runtime installs \(lacking.joined(separator: " ")), which board/vm's ROOTFS_PACKAGES lacks (the guest has no network to install it)")
    }

    /// board/vm's console follower shows each of the scenario's lines whole, also one written in two
    /// parts with more than its 1 s read time-out between them (the guest's console is written as
    /// the guest runs: a line split that way was shown as its first part and the rest hidden, so
    /// an "ok N" line could vanish or a "fencepost-vm: feed" request be missed), and a last line
    /// without a newline. A real writer process appends to a real file; board/vm needs root.
    @Test(.enabled(if: getuid() == 0, "board/vm runs as root only"))
    func vmConsoleFollowerShowsLinesSplitAcrossReads() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fp-follow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let console = dir.appendingPathComponent("console.log").path
        FileManager.default.createFile(atPath: console, contents: nil)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", """
            printf 'ok 1 - whole\\r\\n' >> "$1"; sleep 0.5
            printf 'kernel: noise\\r\\nok 2 - split' >> "$1"; sleep 2.5
            printf ' in two\\r\\n' >> "$1"; sleep 0.5
            printf 'ok 3 - last, no newline' >> "$1"
            """, "sh", console]
        try writer.run()
        let r = try ChildProcess.run(["follow", console, "\(writer.processIdentifier)"],
                                     environment: ["FENCEPOST_VM_QUIET": "1"],
                                     executable: Self.board.appendingPathComponent("vm"), timeLimit: 60)
        writer.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutLines == ["ok 1 - whole", "ok 2 - split in two", "ok 3 - last, no newline"], "\(r.stdout)")
    }

    /// shapely, the polygon oracle, comes from PyPI in the default mode: pip installs it when the
    /// python3 on PATH cannot import it, and nothing happens once it can; the default mode also runs
    /// Tests/Oracles/make_zone_testdata.py (idempotent itself) every time; `--benchmarks` adds
    /// libgeos-dev (the GEOS baseline) and the default mode never installs it. Fakes first on PATH
    /// (`dpkg-query` listing every package but libgeos-dev as installed, `apt-get`, and a `python3`
    /// whose `import shapely` works once its pip has run) record what is asked.
    @Test func installDepsInstallsShapelyOnceAndGEOSOnlyForTheBenchmarks() throws {
        let fakes = try FakePrograms("fp-pypi")
        defer { fakes.remove() }
        let dir = fakes.dir, bin = fakes.bin
        let calls = dir.appendingPathComponent("calls").path, shapely = dir.appendingPathComponent("shapely").path
        let dateutil = dir.appendingPathComponent("dateutil").path, jinja2 = dir.appendingPathComponent("jinja2").path
        try fakes.script("dpkg-query", "for p; do :; done; [ \"$p\" = libgeos-dev ] && exit 1; printf installed\n")
        try fakes.script("apt-get", "echo \"apt-get $*\" >> '\(calls)'\n")
        try fakes.script("python3", """
            echo "python3 $*" >> '\(calls)'
            case "$*" in
              "-c import shapely") [ -e '\(shapely)' ] ;;
              "-m pip --version") exit 0 ;;
              "-m pip install -q shapely") touch '\(shapely)' ;;
              "-c import dateutil.rrule") [ -e '\(dateutil)' ] ;;
              "-m pip install -q python-dateutil") touch '\(dateutil)' ;;
              "-c import jinja2") [ -e '\(jinja2)' ] ;;
              "-m pip install -q jinja2") touch '\(jinja2)' ;;
              */Tests/Oracles/make_zone_testdata.py) exit 0 ;;
              *) exit 2 ;;
            esac

            """)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let deps = Self.board.appendingPathComponent("install-deps").path
        func asked() -> String { (try? String(contentsOfFile: calls, encoding: .utf8)) ?? "" }

        let first = try Self.exec("/bin/sh", [deps], environment: ["PATH": path])
        #expect(first.status == 0, "\(first.output)")
        #expect(asked().contains("python3 -m pip install -q shapely"), "calls:\n\(asked())")
        #expect(asked().contains("python3 -m pip install -q python-dateutil"), "calls:\n\(asked())")
        #expect(asked().contains("python3 -m pip install -q jinja2"), "calls:\n\(asked())")
        #expect(!asked().contains("apt-get"), "the default mode asked apt for something:\n\(asked())")
        #expect(first.output.contains("installing shapely from PyPI"), "\(first.output)")
        #expect(asked().contains("Tests/Oracles/make_zone_testdata.py"), "the zone files were not asked for:\n\(asked())")

        try? FileManager.default.removeItem(atPath: calls)
        let again = try Self.exec("/bin/sh", [deps], environment: ["PATH": path])
        #expect(again.status == 0 && again.output.isEmpty, "\(again.output)")
        #expect(!asked().contains("pip install"), "a second run installed shapely again:\n\(asked())")
        #expect(asked().contains("Tests/Oracles/make_zone_testdata.py"), "the second run did not check the zone files:\n\(asked())")

        try? FileManager.default.removeItem(atPath: calls)
        let benchmarks = try Self.exec("/bin/sh", [deps, "--benchmarks"], environment: ["PATH": path])
        #expect(benchmarks.status == 1, "the fake apt installs nothing: \(benchmarks.output)")
        #expect(asked().contains("apt-get install -y -q libgeos-dev"), "calls:\n\(asked())")
        #expect(benchmarks.output.contains("still not installed: libgeos-dev"), "\(benchmarks.output)")
        #expect(!asked().contains("python3"), "--benchmarks ran python3:\n\(asked())")
    }

    @Test func uninstallDryRun() throws {
        let r = try Self.exec("/bin/sh", [Self.board.appendingPathComponent("uninstall").path, "--dry-run", "--purge"])
        #expect(r.status == 0, "\(r.output)")
        for removed in ["systemctl disable --now fencepost.service", "/etc/systemd/system/fencepost.service",
                        "/usr/local/bin/fencepost-agent", "/etc/udev/rules.d/60-fencepost-gpio.rules", "/var/lib/fencepost"] {
            #expect(r.output.contains(removed), "\(removed) not in:\n\(r.output)")
        }
    }

    /// The example config says `fencepost add --help` lists the request keys: it does, and every
    /// key the example's requests use is among them.
    @Test func addHelpListsTheRequestKeys() throws {
        let help = try ChildProcess.run(["add", "--help"]).stdout
        for key in ["id", "content", "title", "body", "sound", "categoryIdentifier", "interruptionLevel", "trigger.calendar",
                    "match", "tz", "repeats", "trigger.interval", "seconds", "trigger.location", "region", "circle", "polygon",
                    "notifyOnEntry", "notifyOnExit", "dwell", "cooldown", "missed", "coalesce"] {
            #expect(help.contains(key), "add --help does not name \(key)")
        }
        let example = try String(contentsOf: Self.board.appendingPathComponent("fencepost.toml"), encoding: .utf8)
        #expect(example.contains("`fencepost add --help` lists the keys"))
    }

    /// Zones without [[request]] tables: they are zones, not requests (check-config said
    /// "requests: 2, zones: 0").
    @Test func checkConfigCountsZonesWithoutRequestTables() throws {
        let zones = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6.77,51.22]},"properties":{"radius":150}},
              {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[6.78,51.23]},"properties":{"radius":90}}]}
            """
        let dir = try CheckConfigTests.folder(["fencepost.toml": "zones = \"zones.geojson\"\n", "zones.geojson": zones])
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("fencepost.toml").path
        let out = try ChildProcess.run(["check-config", path])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdoutLines.contains("requests: 0"), "\(out.stdout)")
        #expect(out.stdoutLines.contains("zones: 2"), "\(out.stdout)")
        let quiet = try ChildProcess.run(["check-config", "--quiet", path])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet.stdout)")
        let bad = try CheckConfigTests.folder(["fencepost.toml": "[log]\nlevel = \"loud\"\n"])
        defer { try? FileManager.default.removeItem(at: bad) }
        let refused = try ChildProcess.run(["check-config", "--quiet", bad.appendingPathComponent("fencepost.toml").path])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("fencepost.toml:2: log.level"), "\(refused.stderr)")
    }

    /// Each exit status a command gives for a situation is the one its --help names for it.
    @Test func exitCodesAgreeWithHelp() throws {
        let runHelp = try ChildProcess.run(["run", "--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
            .split(separator: " ").joined(separator: " ")
        #expect(runHelp.contains("78 a configuration error (FILE:LINE: message) or the configuration file cannot be read"), "\(runHelp)")
        let run = try ChildProcess.run(["run", "--config", "/nonexistent/fencepost.toml"])
        #expect(run.status == 78, "\(run.stderr)")
        let agentHelp = try ChildProcess.run(["--help"], executable: ChildProcess.agentBinary).stdout
            .replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(agentHelp.contains("78 a configuration error (FILE:LINE: message) or the configuration file cannot be read"), "\(agentHelp)")
        let agent = try ChildProcess.run(["--config", "/nonexistent/fencepost.toml"], executable: ChildProcess.agentBinary)
        #expect(agent.status == 78)
        let checkHelp = try ChildProcess.run(["check-config", "--help"]).stdout.replacingOccurrences(of: "\n", with: " ")
            .split(separator: " ").joined(separator: " ")
        #expect(checkHelp.contains("66 the file cannot be opened"), "\(checkHelp)")
        let check = try ChildProcess.run(["check-config", "/nonexistent/fencepost.toml"])
        #expect(check.status == 66, "\(check.stderr)")
        let usage = try ChildProcess.run(["--no-such-flag"], executable: ChildProcess.agentBinary)
        #expect(usage.status == 64 && agentHelp.contains("64 usage"))
    }
}

/// A temporary folder whose `bin` holds fake programs (shell scripts) to put first on PATH, each
/// recording or answering what a test needs.
final class FakePrograms {
    let dir: URL
    var bin: URL { dir.appendingPathComponent("bin") }

    init(_ prefix: String) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("bin"), withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: dir) }

    /// `bin/name`, executable: `#!/bin/sh` and `body`.
    func script(_ name: String, _ body: String) throws {
        let url = bin.appendingPathComponent(name)
        try Data(("#!/bin/sh\n" + body).utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
    }
}
