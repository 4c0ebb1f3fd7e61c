import Annunciator
import FencepostAgent
import FencepostLinux
import Foundation
import LocalNotifications
import Testing

/// The config file: a full example, the defaults, relative paths, zones, and each class of error
/// at its exact line.
@Suite struct AgentConfigurationTests {

    static func parse(_ text: String, path: String? = "/etc/fencepost/fencepost.toml",
                      files: [String: String] = [:]) throws -> AgentConfiguration {
        try AgentConfiguration.parse(text, path: path) { (p) throws(InputFiles.Failure) -> [UInt8] in
            guard let f = files[p] else { throw .system(Errno.noEntry) }
            return Array(f.utf8)
        }
    }

    /// The error for `text`, which must be refused.
    static func error(_ text: String, files: [String: String] = [:]) -> AgentConfigurationError? {
        do {
            _ = try parse(text, files: files)
            return nil
        } catch let e as AgentConfigurationError {
            return e
        } catch {
            return nil
        }
    }

    static let full = """
        # A full example.
        state = "data/state.sqlite"
        time_zone = "Europe/Berlin"
        clock_trust = "gnss"

        [socket]
        path = "/run/fp/control.sock"
        mode = 0o600
        group = "fencepost"
        max_message_bytes = 8192

        [engine]
        pending_cap = 32
        max_radius = 2000

        [alerts]
        buzzer = true
        led = false
        badge = true
        quiet_hours = "22:00-06:30"

        [gps]
        source = "serial"
        device = "/dev/ttyAMA0"
        baud = 38400

        [gpio]
        backend = "libgpiod"
        chip = "gpiochip4"
        long_press_ms = 1500
        debounce_ms = 20

        [gpio.buzzer]
        pin = 12
        active_low = true

        [gpio.badge]
        enabled = false

        [gpio.button]
        pin = 27
        bias = "pull_down"
        active_low = false

        [patterns]
        triple = [100, 50, 100, 50, 100]

        [hook]
        command = ["/usr/local/bin/notify", "--quiet"]
        timeout = 2.5

        [[category]]
        id = "REMINDER"
        actions = [{ id = "snooze", title = "Later", snoozeSeconds = 600 }]

        [[request]]
        id = "water"
        content = { title = "Drink water", sound = "triple", categoryIdentifier = "REMINDER" }
        trigger.interval = { seconds = 7_200, repeats = true }

        [[request]]
        id = "fasting"
        missed = "skip"
        content.title = "Glucose"
        trigger.calendar = { match = { hour = 7, minute = 0 }, tz = "Europe/Berlin", repeats = true }
        """

    @Test func fullExampleParsesToItsValues() throws {
        let c = try Self.parse(Self.full)
        #expect(c.path == "/etc/fencepost/fencepost.toml")
        #expect(c.statePath == "/etc/fencepost/data/state.sqlite")
        #expect(c.timeZone == "Europe/Berlin")
        #expect(c.clockTrust == .gnss)
        #expect(c.socketPath == "/run/fp/control.sock")
        #expect(c.socketMode == 0o600)
        #expect(c.socketGroup == "fencepost")
        #expect(c.maximumMessageBytes == 8192)
        #expect(c.engine.pendingCap == 32)
        #expect(c.engine.limits.maximumRadius == 2000)
        #expect(c.engine.alertSettings == AlertSettings(buzzer: true, led: false, badge: true,
                                                        quietHours: QuietHours(startMinute: 22 * 60, endMinute: 6 * 60 + 30)))
        #expect(c.gps == .serial(device: "/dev/ttyAMA0", baud: 38400))
        #expect(c.gpio.backend == .libgpiod(chip: "gpiochip4"))
        #expect(c.gpio.buzzer == GPIOLineSpec(name: "buzzer", offset: 12, activeLow: true))
        #expect(c.gpio.led == GPIOLineSpec(name: "led", offset: 23))
        #expect(c.gpio.badge == nil)
        #expect(c.gpio.button == GPIOLineSpec(name: "button", offset: 27, activeLow: false, bias: .pullDown))
        #expect(c.gpio.longPressMilliseconds == 1500)
        #expect(c.gpio.debounceMilliseconds == 20)
        #expect(c.patterns == [try BuzzerPattern(name: "triple", steps: [100, 50, 100, 50, 100])])
        #expect(c.hook?.command == ["/usr/local/bin/notify", "--quiet"])
        #expect(c.hook?.timeoutSeconds == 2.5)
        #expect(c.categories == [NotificationCategory(identifier: "REMINDER",
                                                      actions: [NotificationAction(identifier: "snooze", title: "Later", snoozeSeconds: 600)])])
        #expect(c.requests.map(\.identifier) == ["water", "fasting"])
        #expect(c.requests[0].trigger == .interval(IntervalTrigger(seconds: 7200, repeats: true)))
        #expect(c.requests[0].content.sound == "triple")
        #expect(c.requests[1].missedFirePolicy == .skip)
        guard case .calendar(let cal) = c.requests[1].trigger else { Issue.record("not a calendar trigger"); return }
        #expect(cal.zoneIdentifier == "Europe/Berlin")
        #expect(cal.repeats)
    }

    @Test func emptyFileGivesTheDefaults() throws {
        let c = try Self.parse("# nothing\n", path: nil)
        #expect(c.path == nil)
        #expect(c.statePath == "/var/lib/fencepost/state.sqlite")
        #expect(c.socketPath == "/run/fencepost/control.sock")
        #expect(c.socketMode == 0o660)
        #expect(c.socketGroup == nil)
        #expect(c.maximumMessageBytes == 65536)
        #expect(c.timeZone == nil)
        #expect(c.clockTrust == .ntp)
        #expect(c.gps == GPSConfiguration.none)
        #expect(c.gpio.backend == .console)
        #expect(c.gpio.buzzer?.offset == 18)
        #expect(c.gpio.led?.offset == 23)
        #expect(c.gpio.badge?.offset == 24)
        #expect(c.gpio.button == GPIOLineSpec(name: "button", offset: 17, activeLow: true, bias: .pullUp))
        #expect(c.gpio.longPressMilliseconds == 1000)
        #expect(c.gpio.debounceMilliseconds == 30)
        #expect(c.engine == EngineConfiguration())
        #expect(c.patterns.isEmpty && c.hook == nil && c.requests.isEmpty && c.categories.isEmpty)
    }

    @Test func gpsSources() throws {
        #expect(try Self.parse("[gps]\nsource = \"serial\"").gps == .serial(device: "/dev/serial0", baud: 9600))
        #expect(try Self.parse("[gps]\nsource = \"gpsd\"\nurl = \"gpsd://10.0.0.2:3000\"").gps == .gpsd(host: "10.0.0.2", port: "3000"))
        #expect(try Self.parse("[gps]\nsource = \"gpsd\"\nurl = \"gpsd://[::1]:2947\"").gps == .gpsd(host: "::1", port: "2947"))
        #expect(try Self.parse("[gps]\nsource = \"gpsd\"").gps == .gpsd(host: "127.0.0.1", port: "2947"))
        #expect(try Self.parse("[gps]\nsource = \"replay\"\nfile = \"drive.nmea\"\nspeed = 10\nexit_at_end = true").gps
                == .replay(path: "/etc/fencepost/drive.nmea", speed: 10, exitAtEnd: true))
    }

    @Test func uereAppliesToEverySourceAndIsChecked() throws {
        #expect(try Self.parse("[gps]\nsource = \"gpsd\"").gpsUERE == 5)
        #expect(try Self.parse("[gps]\nsource = \"serial\"\nuere = 3.5").gpsUERE == 3.5)
        #expect(try Self.parse("[gps]\nsource = \"replay\"\nfile = \"d.nmea\"\nuere = 8").gpsUERE == 8)
        #expect(throws: AgentConfigurationError.self) { try Self.parse("[gps]\nsource = \"gpsd\"\nuere = 0") }
        let error = #expect(throws: AgentConfigurationError.self) { try Self.parse("[gps]\nsource = \"gpsd\"\n\nuere = -2") }
        #expect(error?.line == 4 && error?.message.contains("uere") == true, "\(String(describing: error))")
    }

    @Test func relativePathsResolveAgainstTheConfigFolder() throws {
        let text = "state = \"s.sqlite\"\nzones = \"z/zones.geojson\"\n[gps]\nsource = \"replay\"\nfile = \"../drives/a.gpx\"\n"
        let zones = #"{"type":"FeatureCollection","features":[]}"#
        let c = try Self.parse(text, path: "/home/pi/demo/fencepost.toml", files: ["/home/pi/demo/z/zones.geojson": zones])
        #expect(c.statePath == "/home/pi/demo/s.sqlite")
        #expect(c.gps == .replay(path: "/home/pi/demo/../drives/a.gpx", speed: 1, exitAtEnd: false))
        let bare = try Self.parse(text, path: "fencepost.toml", files: ["z/zones.geojson": zones])
        #expect(bare.statePath == "s.sqlite")
        let absolute = try Self.parse("state = \"/data/s.sqlite\"", path: "/etc/fencepost/fencepost.toml")
        #expect(absolute.statePath == "/data/s.sqlite")
    }

    static let zonesFile = """
        {"type":"FeatureCollection","features":[
          {"type":"Feature","id":"depot","geometry":{"type":"Point","coordinates":[6.7735,51.2277]},
           "properties":{"radius":150,"dwell":60,"notifyOnExit":false}},
          {"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[6.77,51.22],[6.78,51.22],[6.78,51.23],[6.77,51.22]]]},
           "properties":{"id":"yard","cooldown":300}}]}
        """

    /// Zones are a zone set, not requests: the file is recorded (resolved), checked zone by zone
    /// and counted; the agent (checkZones: false) only records it.
    @Test func zonesAreRecordedAndChecked() throws {
        let text = "zones = \"zones.geojson\"\n[[request]]\nid = \"w\"\ntrigger.interval.seconds = 60\n"
        let c = try Self.parse(text, files: ["/etc/fencepost/zones.geojson": Self.zonesFile])
        #expect(c.requests.map(\.identifier) == ["w"])
        #expect(c.zonesFile == "/etc/fencepost/zones.geojson")
        #expect(c.lines.zones == 1)
        #expect(c.zoneCount == 2)
        let unchecked = try AgentConfiguration.parse(text, path: "/etc/fencepost/fencepost.toml",
                                                     zoneFileReader: { (_) throws(InputFiles.Failure) -> [UInt8] in throw .notRegular }, checkZones: false)
        #expect(unchecked.zonesFile == "/etc/fencepost/zones.geojson" && unchecked.zoneCount == nil)
    }


    /// `zones_id_property` names the property that is each zone's id (over the feature's "id",
    /// which comes next, then properties.id); the check counts zones by it, reports every bad
    /// feature of the file, and an empty name is refused at its line.
    @Test func zonesIDPropertyNamesTheZones() throws {
        let file = #"""
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":1,"properties":{"ADM0_A3":"ZAF","radius":10},"geometry":{"type":"Point","coordinates":[28,-26]}},
              {"type":"Feature","id":2,"properties":{"ADM0_A3":"LSO","radius":10},"geometry":{"type":"Point","coordinates":[28,-29]}},
              {"type":"Feature","id":3,"properties":{"ADM0_A3":"ZAF","radius":20},"geometry":{"type":"Point","coordinates":[28,-27]}}]}
            """#
        let files = ["/etc/fencepost/zones.geojson": file]
        let named = try Self.parse("zones = \"zones.geojson\"\nzones_id_property = \"ADM0_A3\"\n", files: files)
        #expect(named.zonesIDProperty == "ADM0_A3")
        #expect(named.zoneCount == 2)   // ZAF twice: the later replaces
        let plain = try Self.parse("zones = \"zones.geojson\"\n", files: files)
        #expect(plain.zonesIDProperty == nil && plain.zoneCount == 3)
        let empty = try #require(Self.error("zones = \"zones.geojson\"\n\nzones_id_property = \"\"", files: files))
        #expect(empty.line == 3)
        #expect(empty.message == #"zones_id_property: must not be empty (leave it out for the feature's "id", else properties.id)"#)
        let bad = #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"fid":[1],"radius":1},"geometry":{"type":"Point","coordinates":[1,2]}},{"type":"Feature","properties":{"radius":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#
        let e = try #require(Self.error("zones = \"z.geojson\"\nzones_id_property = \"fid\"", files: ["/etc/fencepost/z.geojson": bad]))
        #expect(e.message == """
            zones: /etc/fencepost/z.geojson: feature 0: properties.fid must be a non-empty string or an integer, found an array
            zones: /etc/fencepost/z.geojson: feature 1: a zone needs an id: properties.fid, the feature's "id" or properties.id
            """)
        // Each line says where, as compilers do (and `check-config` prints it).
        #expect(e.description.split(separator: "\n").count == 2)
        #expect(e.description.split(separator: "\n").allSatisfy { $0.hasPrefix("/etc/fencepost/fencepost.toml:1: zones: /etc/fencepost/z.geojson: feature ") },
                "\(e.description)")
    }

    @Test func zoneErrorsNameTheGeoJSONFile() throws {
        let bad = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]}}]}"#
        let e = try #require(Self.error("\n\nzones = \"zones.geojson\"", files: ["/etc/fencepost/zones.geojson": bad]))
        #expect(e.line == 3)
        #expect(e.message.hasPrefix("zones: /etc/fencepost/zones.geojson: feature 0 (\"x\")"))
        let missing = try #require(Self.error("zones = \"nope.geojson\""))
        #expect(missing.line == 1)
        #expect(missing.message.contains("/etc/fencepost/nope.geojson: cannot read: No such file or directory"))
        let clash = try #require(Self.error("zones = \"z.geojson\"\n[[request]]\nid = \"depot\"\ntrigger.interval.seconds = 60",
                                            files: ["/etc/fencepost/z.geojson": Self.zonesFile]))
        #expect(clash.line == 1)
        #expect(clash.message.contains("zone \"depot\" has the id of a [[request]]"))
    }

    /// Each class of error, with the line it must name and a part of its message.
    @Test(arguments: [
        ("\n\n[gpio.buzzer]\npin = 99", 4, "gpio.buzzer.pin: 99 is not a BCM pin (0…27)"),
        ("[gpio]\nbuzer = 3", 2, "gpio: unknown key `buzer` (did you mean `buzzer`?)"),
        ("stat = \"x\"", 1, "unknown key `stat` (did you mean `state`?)"),
        ("[gps]\nsource = \"serial\"\nbaud = 9601", 3, "gps.baud: 9601 is not a supported baud rate"),
        ("[gps]\nsource = \"replay\"\nfile = \"a.nmea\"\n\nspeed = 0", 5, "gps.speed: must be 0.001…10000"),
        ("[gps]\nsource = \"gpsd\"\nurl = \"http://x\"", 3, "gps.url: \"http://x\" is not gpsd://HOST:PORT"),
        ("[gps]\nsource = \"gpsd\"\nbaud = 9600", 3, "gps.baud: applies to source = \"serial\", not \"gpsd\""),
        ("[gps]\nsource = \"replay\"", 1, "gps.file: missing"),
        ("[gps]\nsource = \"usb\"", 2, "gps.source: \"usb\" is not one of"),
        ("[alerts]\nquiet_hours = \"22:00-6:30\"", 2, "alerts.quiet_hours: \"22:00-6:30\" is not a span \"HH:MM-HH:MM\""),
        ("[alerts]\nquiet_hours = \"24:00-06:30\"", 2, "is not a span"),
        ("[patterns]\nok = [100]\nbad = [100, 0]", 3, "patterns.bad: buzzer pattern \"bad\" step 2 is 0 ms"),
        ("[hook]\ncommand = []", 2, "hook.command: must name a program"),
        ("[hook]\ntimeout = 3", 1, "hook.command: missing"),
        ("[gpio.led]\npin = 18", 2, "gpio.led.pin: BCM 18 is already used by gpio.buzzer (its default pin)"),
        ("[gpio.buzzer]\npin = 5\n[gpio.button]\npin = 5", 4, "gpio.button.pin: BCM 5 is already used by gpio.buzzer"),
        ("clock_trust = \"rtc\"", 1, "clock_trust: \"rtc\" is not one of"),
        ("[socket]\nmode = 0o1777", 2, "socket.mode: 1023 is not a permission mode"),
        ("[gpio]\nbackend = \"sysfs\"", 2, "gpio.backend: \"sysfs\" is not one of"),
        ("[engine]\npending_cap = \"many\"", 2, "engine.pending_cap: expected an integer, found a string"),
        ("a = 1\nb = [1,\n", 3, "column"),
        ("[[request]]\nid = \"a\"\ntrigger.interval.seconds = 60\n[[request]]\nid = \"b\"\ntrigger.interval.seconds = 60\n"
            + "[[request]]\nid = \"c\"\ntrigger.interval.seconds = 60\n[[request]]\nid = \"x\"\n\ntrigger.interval.seconds = 0",
         13, "request[3] (id \"x\"): trigger.interval.seconds must be greater than 0"),
        ("[[request]]\nid = \"a\"\ntrigger.interval.seconds = 60\n\n[[request]]\nid = \"a\"\ntrigger.interval.seconds = 90",
         5, "request[1] (id \"a\"): duplicate id (first at line 1)"),
        ("[[request]]\nid = \"a\"\ncontent.title = \"t\"\ncontent.sound = \"beeep\"\ntrigger.interval.seconds = 60",
         4, "content.sound \"beeep\" is not a buzzer pattern"),
        ("[[request]]\nid = \"a\"\ncontent.categoryIdentifier = \"NOPE\"\ntrigger.interval.seconds = 60",
         3, "content.categoryIdentifier \"NOPE\" is not a [[category]]"),
        ("[[request]]\nid = \"a\"", 1, "request[0] (id \"a\"): missing key \"trigger\""),
        ("[engine]\nmax_radius = 100\n[[request]]\nid = \"far\"\ntrigger.location.region.circle = { lat = 1, lon = 2, radius = 500 }",
         5, "request[0] (id \"far\"): trigger.location.region.circle.radius must be at most 100 m"),
        ("[[category]]\nid = \"A\"\n[[category]]\nid = \"A\"", 3, "category[1] (id \"A\"): duplicate id (first at line 1)"),
    ] as [(String, Int, String)])
    func errorNamesItsLine(text: String, line: Int, message: String) throws {
        let e = try #require(Self.error(text), "accepted: \(text)")
        #expect(e.line == line, "\(e)")
        #expect(e.message.contains(message), "\(e)")
        #expect(e.path == "/etc/fencepost/fencepost.toml")
        #expect(e.description.hasPrefix("/etc/fencepost/fencepost.toml:\(line): "))
    }

    @Test func descriptionHasTheCompilerForm() {
        let e = AgentConfigurationError(path: "fencepost.toml", line: 12, message: "gpio.buzzer.pin: 99 is not a BCM pin (0…27)")
        #expect(e.description == "fencepost.toml:12: gpio.buzzer.pin: 99 is not a BCM pin (0…27)")
        #expect(AgentConfigurationError(path: nil, line: 3, message: "m").description == "line 3: m")
    }

    /// `[fleet] ha`: Home Assistant's discovery, off unless asked; a wrong type named at its line.
    @Test func fleetHomeAssistantKey() throws {
        let base = "[fleet]\nbroker = \"unix:/run/b.sock\"\ndevice = \"van-1\"\n"
        #expect(try Self.parse(base).fleet?.homeAssistant == false)
        #expect(try Self.parse(base + "ha = true\n").fleet?.homeAssistant == true)
        let e = Self.error(base + "ha = \"yes\"\n")
        #expect(e?.line == 4 && e?.message.contains("ha") == true, "\(String(describing: e))")
    }
}
