// Next fire (CalendarSchedule) against a minute-by-minute scan, in zones with DST. The zones are
// built-in POSIX rules so that the check needs no zone files on the board and gives the same
// answers everywhere; the rules cover both hemispheres, a 30-minute DST and negative rule times.
import CivilTime
import SeededRandom

enum AlgorithmCheckCalendar {
    static let rules = [
        "CET-1CEST,M3.5.0,M10.5.0/3",          // Europe/Berlin
        "EST5EDT,M3.2.0,M11.1.0",              // America/New_York
        "AEST-10AEDT,M10.1.0,M4.1.0/3",        // Australia/Sydney: DST over new year
        "LHST-10:30LHDT-11,M10.1.0,M4.1.0",    // Australia/Lord_Howe: 30-minute DST
        "IST-2IDT,M3.4.4/26,M10.5.0",          // Asia/Jerusalem: a rule time past 24 h
        "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",      // America/Nuuk: a negative rule time
    ]

    /// Runs `cases` random matches (hour and minute, sometimes a weekday; first or last of a
    /// repeated time) from instants near DST transitions; returns the number of cases.
    static func run(seed: UInt64, _ digest: inout AlgorithmCheckDigest) -> Int {
        var random = SplitMix64(seed: seed)
        var zones: [ZoneRules] = []
        for text in rules {
            guard let zone = try? ZoneRules(posixTZ: text) else {
                digest.difference("POSIX rule \(text) rejected")
                continue
            }
            zones.append(zone)
        }
        let cases = 240
        for n in 0 ..< cases {
            let zoneIndex = n % zones.count
            let zone = zones[zoneIndex]
            // An instant up to two days before a transition between 1990 and 2037.
            let year = Int64(random.int(1990 ... 2037))
            let start = (year - 1970) * 31_556_952 + Int64(random.int(0 ... 31_000_000))
            let transition = zone.nextTransition(after: start) ?? start
            let after = transition - Int64(random.int(0 ... 172_800))
            // Hours near the transitions are likelier.
            let hour = random.chance(0.6) ? random.int(0 ... 4) : random.int(0 ... 23)
            let minute = random.chance(0.5) ? random.pick([0, 15, 30, 45]) : random.int(0 ... 59)
            let weekday: Int? = random.chance(0.3) ? random.int(1 ... 7) : nil
            let last = random.chance(0.5)
            let match = CalendarMatch(hour: hour, minute: minute, weekday: weekday)
            let answer = match.nextDate(after: WallInstant(secondsSinceEpoch: after), in: zone, policy: .strict,
                                        repeatedTime: last ? .last : .first)
            let reference = bruteForce(after: after, hour: hour, minute: minute, weekday: weekday, last: last) {
                Int64(zone.utcOffset(atSecondsSinceEpoch: $0))
            }
            digest.add(answer?.secondsSinceEpoch ?? -1)
            if answer?.secondsSinceEpoch != reference {
                digest.difference("\(rules[zoneIndex]) after \(after) \(hour):\(minute) weekday \(weekday ?? 0)"
                                  + " \(last ? "last" : "first"): \(answer?.secondsSinceEpoch ?? -1) vs \(reference ?? -1)")
            }
        }
        return cases
    }

    /// The first whole minute after `after` whose local time has this hour and minute (and
    /// weekday, 1 = Sunday), skipping the occurrence of a repeated local time that is not wanted.
    static func bruteForce(after: Int64, hour: Int, minute: Int, weekday: Int?, last: Bool,
                           offset: (Int64) -> Int64) -> Int64? {
        var t = after - ((after % 60) + 60) % 60 + 60
        let end = after + 10 * 86_400
        while t < end {
            let local = t + offset(t)
            if matches(local, hour, minute, weekday) {
                // The same local time an hour or half an hour earlier or later is a repeat.
                var earlier = false, later = false
                for d: Int64 in [1800, 3600, 7200] {
                    if (t - d) + offset(t - d) == local { earlier = true }
                    if (t + d) + offset(t + d) == local { later = true }
                }
                if !(last ? later : earlier) { return t }
            }
            t += 60
        }
        return nil
    }

    /// Whether local seconds since the epoch fall on the hour, minute and weekday.
    static func matches(_ local: Int64, _ hour: Int, _ minute: Int, _ weekday: Int?) -> Bool {
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - days * 86_400
        guard secondOfDay / 3600 == Int64(hour), (secondOfDay / 60) % 60 == Int64(minute) else { return false }
        guard let weekday else { return true }
        // 1970-01-01 was a Thursday (5 with Sunday = 1).
        return Int((((days + 4) % 7) + 7) % 7) + 1 == weekday
    }
}
