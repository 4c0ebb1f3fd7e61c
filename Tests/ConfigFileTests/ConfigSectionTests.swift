import ConfigFile
import FencepostJSON
import Testing

/// Semantic errors: typed accessors, unknown keys with suggestions, paths and lines.
@Suite struct ConfigSectionTests {
    static let text = """
        # Fencepost on the van
        log = "info"

        [gpio]
        chip = "gpiochip0"
        buzer = { pin = 18 }
        led.pin = "23"

        [gpio.button]
        pin = 99
        debounce_ms = 30.5

        [[requests]]
        identifier = "water"
        seconds = [60, 120]

        [[requests]]
        identifier = 7
        seconds = [60, "x"]
        """

    static func config() throws -> ConfigSection { try ConfigSection.parse(text) }

    /// The description of the error `body` throws (it must be a ``ConfigError``), nil if none.
    static func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ConfigError {
            return error.description
        } catch {
            return "not a ConfigError: \(error)"
        }
    }

    @Test func unknownKeySuggestsTheClosestAllowed() throws {
        let root = try Self.config()
        #expect(Self.failure { try root.checkKeys(allowed: ["log", "gpio", "requests"]) } == nil)
        #expect(Self.failure { try root.checkKeys(allowed: ["log", "gpio"]) }
                == "line 13: unknown key `requests` (allowed: `log`, `gpio`)")
        let gpio = try #require(try root.section("gpio"))
        #expect(Self.failure { try gpio.checkKeys(allowed: ["chip", "buzzer", "led", "button"]) }
                == "line 6: gpio: unknown key `buzer` (did you mean `buzzer`?)")
        // A typo at the top level has no path.
        let top = try ConfigSection.parse("a = 1\n\nbuzer = 2")
        #expect(Self.failure { try top.checkKeys(allowed: ["a", "buzzer"]) } == "line 3: unknown key `buzer` (did you mean `buzzer`?)")
        // Nothing within distance 2: the allowed keys are listed.
        #expect(Self.failure { try top.checkKeys(allowed: ["a", "speaker"]) } == "line 3: unknown key `buzer` (allowed: `a`, `speaker`)")
    }

    @Test func editDistance() {
        #expect(ConfigSection.editDistance("buzer", "buzzer") == 1)
        #expect(ConfigSection.editDistance("buzzre", "buzzer") == 1)  // a swap counts once
        #expect(ConfigSection.editDistance("bzuzer", "buzzer") == 1)
        #expect(ConfigSection.editDistance("bzr", "buzzer") == 3)
        #expect(ConfigSection.editDistance("", "abc") == 3)
        #expect(ConfigSection.editDistance("pin", "pin") == 0)
        #expect(ConfigSection.editDistance("kitten", "sitting") == 3)
        #expect(ConfigSection.closest(to: "pn", among: ["pins", "pin"]) == "pin")
        #expect(ConfigSection.closest(to: "colour", among: ["color", "colors"]) == "color")
        #expect(ConfigSection.closest(to: "xyz", among: ["pin"]) == nil)
    }

    @Test func typedAccessorsNameLineAndPath() throws {
        let root = try Self.config()
        #expect(try root.string("log") == "info")
        #expect(try root.string("missing") == nil)
        #expect(Self.failure { _ = try root.integer("log") } == "line 2: log: expected an integer, found a string")
        let gpio = try #require(try root.section("gpio"))
        #expect(Self.failure { _ = try gpio.integer("chip") } == "line 5: gpio.chip: expected an integer, found a string")
        let led = try #require(try gpio.section("led"))
        #expect(Self.failure { _ = try led.integer("pin") } == "line 7: gpio.led.pin: expected an integer, found a string")
        #expect(Self.failure { _ = try gpio.section("chip") } == "line 5: gpio.chip: expected a table, found a string")
        let button = try #require(try gpio.section("button"))
        #expect(button.line == 9)
        #expect(Self.failure { _ = try button.integer("debounce_ms") } == "line 11: gpio.button.debounce_ms: expected an integer, found a float")
        #expect(try button.float("debounce_ms") == 30.5)
        #expect(try button.float("pin") == 99)  // an integer reads as a float
        #expect(Self.failure { _ = try button.boolean("pin") } == "line 10: gpio.button.pin: expected a boolean, found an integer")
        #expect(Self.failure { _ = try button.integer("pin", in: 0...27) } == "line 10: gpio.button.pin: 99 is out of range 0...27")
        // The caller's own semantic check.
        if let pin = try button.integer("pin"), pin > 27 {
            #expect(button.error("pin", "\(pin) is not a BCM pin").description == "line 10: gpio.button.pin: 99 is not a BCM pin")
        } else {
            Issue.record("pin not read")
        }
        #expect(Self.failure { _ = try button.require(try button.integer("mode"), "mode", "an integer") }
                == "line 9: gpio.button.mode: missing (expected an integer)")
    }

    @Test func arraysOfTablesAndElements() throws {
        let root = try Self.config()
        let requests = try #require(try root.sections("requests"))
        #expect(requests.map(\.line) == [13, 17])
        #expect(requests.map(\.pathText) == ["requests[0]", "requests[1]"])
        #expect(try requests[0].string("identifier") == "water")
        #expect(try requests[0].integers("seconds") == [60, 120])
        #expect(Self.failure { _ = try requests[1].string("identifier") } == "line 18: requests[1].identifier: expected a string, found an integer")
        #expect(Self.failure { _ = try requests[1].integers("seconds") } == "line 19: requests[1].seconds[1]: expected an integer, found a string")
        #expect(Self.failure { _ = try requests[0].strings("identifier") } == "line 14: requests[0].identifier: expected an array of strings, found a string")
        #expect(Self.failure { _ = try root.sections("log") } == "line 2: log: expected an array of tables, found a string")
        let mixed = try ConfigSection.parse("a = [{ x = 1 }, 2]")
        #expect(Self.failure { _ = try mixed.sections("a") } == "line 1: a[1]: expected a table, found an integer")
    }

    @Test func quotedKeysInPaths() throws {
        let c = try ConfigSection.parse("[\"my zone\"]\n\"radius m\" = \"x\"")
        let zone = try #require(try c.section("my zone"))
        #expect(Self.failure { _ = try zone.float("radius m") } == "line 2: \"my zone\".\"radius m\": expected a number, found a string")
    }

    @Test func syntaxErrorsBecomeConfigErrorsWithColumn() {
        #expect(Self.failure { _ = try ConfigSection.parse("a = 1\nb = [1 2]") } == "line 2, column 8: expected `,` or `]` in the array, found `2`")
    }

    @Test func requestInTOMLDecodesLikeJSON() throws {
        let toml = """
            identifier = "water"
            [content]
            title = "Drink water"
            userInfo = { route = "A1" }
            [trigger]
            type = "calendar"
            dateMatching = { hour = 7, minute = 0 }
            repeats = true
            """
        let json = #"{"identifier":"water","content":{"title":"Drink water","userInfo":{"route":"A1"}},"trigger":{"type":"calendar","dateMatching":{"hour":7,"minute":0},"repeats":true}}"#
        #expect(try TOML.parse(toml).json == JSONValue.parse(json))
        #expect(try TOML.parse(toml).json.serialized() == json)
    }
}
