import CivilTime
@testable import fencepost
import Testing

/// Decoding a script-mode request line.
@Suite struct NextRequestTests {
    @Test func requestDecoding() throws {
        func decode(_ text: String) -> Result<NextRequest, NextRequestError> {
            Result { () throws(NextRequestError) in
                try NextRequest(json: try! .parse(text))
            }
        }
        let r = try decode(#"{"match":{"weekday":"fri","hour":7},"count":3,"firstWeekday":2,"minimumDaysInFirstWeek":4,"repeatedTime":"last","policy":"strict"}"#).get()
        #expect(r.match == CalendarMatch(hour: 7, weekday: 6))
        #expect(r.count == 3 && r.policy == .strict && r.repeatedTime == .last)
        #expect(r.weekRules == .iso8601)
        #expect(r.after == nil && r.zoneName == nil)
        #expect(throws: NextRequestError("missing key \"match\" (or \"rrule\" with \"dtstart\")")) { try decode(#"{"tz":"UTC"}"#).get() }
        #expect(throws: NextRequestError("\"count\" must be an integer, got a string")) {
            try decode(#"{"match":{"hour":1},"count":"3"}"#).get()
        }
        #expect(throws: NextRequestError("\"firstWeekday\" must be 1...7 (1 = Sunday), got 8")) {
            try decode(#"{"match":{"hour":1},"firstWeekday":8}"#).get()
        }
        #expect(throws: NextRequestError.self) { try decode(#"{"match":{"hour":1.5}}"#).get() }
        #expect(throws: NextRequestError.self) { try decode(#"{"match":{"hour":1},"after":"tomorrow"}"#).get() }
    }
}
