import FencepostAgent
import Testing

/// What a SIGHUP does with each key comes from one place, ConfigurationKeys: for every key there,
/// a file that changes only that key is applied (the running configuration becomes the new file's)
/// or, for a key that needs a restart, kept as it runs and named by that key alone, again at the
/// next SIGHUP. Every key must have a sample here, so a new key cannot be left out.
@Suite struct ConfigurationReloadTests {
    /// Per key: a file, and the same file with that key changed (or first set).
    static let samples: [String: (base: String, changed: String)] = [
        "state": ("", "state = \"other.sqlite\"\n"),
        "time_zone": ("", "time_zone = \"Asia/Tokyo\"\n"),
        "clock_trust": ("", "clock_trust = \"always\"\n"),
        "zones": ("", "zones = \"zones.geojson\"\n"),
        "zones_id_property": ("", "zones_id_property = \"name\"\n"),
        "socket.path": ("", "[socket]\npath = \"/tmp/other.sock\"\n"),
        "socket.mode": ("", "[socket]\nmode = 0o600\n"),
        "socket.group": ("", "[socket]\ngroup = \"adm\"\n"),
        "socket.max_message_bytes": ("", "[socket]\nmax_message_bytes = 2048\n"),
        "socket.max_connections": ("", "[socket]\nmax_connections = 7\n"),
        "socket.request_timeout": ("", "[socket]\nrequest_timeout = 3\n"),
        "socket.write_timeout": ("", "[socket]\nwrite_timeout = 3\n"),
        "socket.idle_timeout": ("", "[socket]\nidle_timeout = 3\n"),
        "engine.pending_cap": ("", "[engine]\npending_cap = 5\n"),
        "engine.location_cap": ("", "[engine]\nlocation_cap = 5\n"),
        "engine.delivered_cap": ("", "[engine]\ndelivered_cap = 5\n"),
        "engine.max_radius": ("", "[engine]\nmax_radius = 5000\n"),
        "alerts.buzzer": ("", "[alerts]\nbuzzer = false\n"),
        "alerts.led": ("", "[alerts]\nled = false\n"),
        "alerts.badge": ("", "[alerts]\nbadge = false\n"),
        "alerts.quiet_hours": ("", "[alerts]\nquiet_hours = \"22:00-06:30\"\n"),
        "gps.source": ("", "[gps]\nsource = \"gpsd\"\n"),
        "gps.device": ("[gps]\nsource = \"serial\"\n", "[gps]\nsource = \"serial\"\ndevice = \"/dev/ttyUSB0\"\n"),
        "gps.baud": ("[gps]\nsource = \"serial\"\n", "[gps]\nsource = \"serial\"\nbaud = 115200\n"),
        "gps.url": ("[gps]\nsource = \"gpsd\"\n", "[gps]\nsource = \"gpsd\"\nurl = \"gpsd://10.0.0.2:2947\"\n"),
        "gps.file": ("[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\n", "[gps]\nsource = \"replay\"\nfile = \"b.nmea\"\n"),
        "gps.speed": ("[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\n", "[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\nspeed = 10\n"),
        "gps.exit_at_end": ("[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\n", "[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\nexit_at_end = true\n"),
        "gps.uere": ("", "[gps]\nuere = 7.5\n"),
        "gpio.backend": ("", "[gpio]\nbackend = \"libgpiod\"\n"),
        "gpio.chip": ("[gpio]\nbackend = \"libgpiod\"\n", "[gpio]\nbackend = \"libgpiod\"\nchip = \"gpiochip1\"\n"),
        "gpio.long_press_ms": ("", "[gpio]\nlong_press_ms = 2000\n"),
        "gpio.debounce_ms": ("", "[gpio]\ndebounce_ms = 50\n"),
        "gpio.buzzer.pin": ("", "[gpio.buzzer]\npin = 5\n"),
        "gpio.buzzer.active_low": ("", "[gpio.buzzer]\nactive_low = true\n"),
        "gpio.buzzer.bias": ("", "[gpio.buzzer]\nbias = \"pull_down\"\n"),
        "gpio.buzzer.enabled": ("", "[gpio.buzzer]\nenabled = false\n"),
        "gpio.led.pin": ("", "[gpio.led]\npin = 5\n"),
        "gpio.led.active_low": ("", "[gpio.led]\nactive_low = true\n"),
        "gpio.led.bias": ("", "[gpio.led]\nbias = \"pull_down\"\n"),
        "gpio.led.enabled": ("", "[gpio.led]\nenabled = false\n"),
        "gpio.badge.pin": ("", "[gpio.badge]\npin = 5\n"),
        "gpio.badge.active_low": ("", "[gpio.badge]\nactive_low = true\n"),
        "gpio.badge.bias": ("", "[gpio.badge]\nbias = \"pull_down\"\n"),
        "gpio.badge.enabled": ("", "[gpio.badge]\nenabled = false\n"),
        "gpio.button.pin": ("", "[gpio.button]\npin = 5\n"),
        "gpio.button.active_low": ("", "[gpio.button]\nactive_low = false\n"),
        "gpio.button.bias": ("", "[gpio.button]\nbias = \"disabled\"\n"),
        "gpio.button.enabled": ("", "[gpio.button]\nenabled = false\n"),
        "patterns.<name>": ("", "[patterns]\nbeep = [100, 100, 100]\n"),
        "log.level": ("", "[log]\nlevel = \"debug\"\n"),
        "hook.command": ("", "[hook]\ncommand = [\"/bin/true\"]\n"),
        "hook.timeout": ("[hook]\ncommand = [\"/bin/true\"]\n", "[hook]\ncommand = [\"/bin/true\"]\ntimeout = 9\n"),
        "fleet.broker": (fleet(""), fleet("").replacingOccurrences(of: "mqtt://h", with: "mqtt://h2")),
        "fleet.device": (fleet(""), fleet("").replacingOccurrences(of: "\"d1\"", with: "\"d2\"")),
        "fleet.ca": (tlsFleet(ca: "ca.pem"), tlsFleet(ca: "ca2.pem")),
        "fleet.cert": (tlsFleet(cert: "c.pem"), tlsFleet(cert: "c2.pem")),
        "fleet.key": (tlsFleet(key: "k.pem"), tlsFleet(key: "k2.pem")),
        "fleet.username": (fleet(""), fleet("username = \"u\"\n")),
        "fleet.password_file": (fleet("username = \"u\"\n"), fleet("username = \"u\"\npassword_file = \"p\"\n")),
        "fleet.keepalive": (fleet(""), fleet("keepalive = 30\n")),
        "fleet.outbox_rows": (fleet(""), fleet("outbox_rows = 1000\n")),
        "fleet.outbox_bytes": (fleet(""), fleet("outbox_bytes = 1048576\n")),
        "fleet.health_interval": (fleet(""), fleet("health_interval = 60\n")),
        "fleet.ha": (fleet(""), fleet("ha = true\n")),
        "request": ("", "[[request]]\nid = \"r\"\ntrigger = { interval = { seconds = 600, repeats = true } }\n"),
        "category": ("", "[[category]]\nid = \"c\"\nactions = [{ id = \"ok\", title = \"OK\" }]\n"),
    ]

    static func fleet(_ extra: String) -> String { "[fleet]\nbroker = \"mqtt://h\"\ndevice = \"d1\"\n" + extra }
    static func tlsFleet(ca: String = "ca.pem", cert: String = "c.pem", key: String = "k.pem") -> String {
        "[fleet]\nbroker = \"mqtts://h\"\ndevice = \"d1\"\nca = \"\(ca)\"\ncert = \"\(cert)\"\nkey = \"\(key)\"\n"
    }

    static func parse(_ text: String) throws -> AgentConfiguration {
        try AgentConfiguration.parse(text, path: "/etc/fencepost/agent.toml",
                                     zoneFileReader: { (_: String) throws(InputFiles.Failure) -> [UInt8] in [] }, checkZones: false)
    }

    /// Every stored value, nested (the tests may reflect; the agent does not).
    static func describe(_ c: AgentConfiguration) -> String {
        var out = ""
        dump(c, to: &out)
        return out
    }

    @Test func everyKeyHasASample() {
        let missing = ConfigurationKeys.all.map(\.path).filter { Self.samples[$0] == nil }
        #expect(missing == [], "add a sample for each: a new key must show what SIGHUP does with it")
    }

    @Test(arguments: ConfigurationKeys.all.map(\.path))
    func sighupDoesWhatTheKeySays(_ path: String) throws {
        let key = try #require(ConfigurationKeys.all.first { $0.path == path })
        let sample = try #require(Self.samples[path], "no sample for \(path)")
        let running = try Self.parse(sample.base), next = try Self.parse(sample.changed)
        #expect(Self.describe(running) != Self.describe(next), "\(path): the sample changes nothing")
        let reloaded = running.reloaded(by: next)
        let named = ConfigurationKeys.restartKeysChanged(from: running, to: next)
        switch key.reload {
        case .applied:
            #expect(Self.describe(reloaded) == Self.describe(next), "\(path) was not applied")
            #expect(named == [], "\(path) is applied, yet the log names \(named)")
        case .needsRestart:
            #expect(Self.describe(reloaded) == Self.describe(running), "\(path) needs a restart, yet SIGHUP changed the running value")
            #expect(named == [path], "\(path) changed; the log names \(named)")
            // Still running the old value: the next SIGHUP says so again.
            #expect(ConfigurationKeys.restartKeysChanged(from: reloaded, to: next) == [path])
            // check-config names the restart keys the file sets.
            #expect(ConfigurationKeys.restartKeysSet(by: next).contains(path))
        }
    }
}
