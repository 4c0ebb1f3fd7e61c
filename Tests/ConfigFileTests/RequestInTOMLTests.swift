import ConfigFile
import FencepostJSON
import LocalNotifications
import Testing

/// A request written in TOML decodes through the same JSON decoder as the control socket's.
@Suite struct RequestInTOMLTests {
    @Test func calendarRequestDecodesLikeItsJSON() throws {
        let toml = """
            id = "fasting"
            missed = "coalesce"

            [content]
            title = "Glucose"
            body = "Check now"
            badge = 1
            userInfo = { meal = "fasting" }

            [trigger.calendar]
            match = { hour = 7, minute = 0 }
            tz = "Europe/Berlin"
            repeats = true
            """
        let json = """
            {"id":"fasting","missed":"coalesce","content":{"title":"Glucose","body":"Check now","badge":1,
             "userInfo":{"meal":"fasting"}},"trigger":{"calendar":{"match":{"hour":7,"minute":0},"tz":"Europe/Berlin","repeats":true}}}
            """
        let fromTOML = try NotificationRequest(json: TOML.parse(toml).json)
        let fromJSON = try NotificationRequest(json: JSONValue.parse(json))
        #expect(fromTOML == fromJSON)
        #expect(fromTOML.identifier == "fasting")
    }

    @Test func arrayOfRequestTables() throws {
        let toml = """
            [[requests]]
            id = "water"
            content.title = "Drink water"
            trigger.interval = { seconds = 7_200, repeats = true }

            [[requests]]
            id = "depot"
            content.title = "Depot"
            trigger.location.region.circle = { lat = 51.5007, lon = -0.1246, radius = 150 }
            trigger.location.notifyOnEntry = true
            """
        let config = try ConfigSection.parse(toml)
        let tables = try #require(try config.sections("requests"))
        let requests = try tables.map { try NotificationRequest(json: $0.table.json) }
        #expect(requests.map(\.identifier) == ["water", "depot"])
        #expect(tables.map(\.line) == [1, 6])
    }
}
