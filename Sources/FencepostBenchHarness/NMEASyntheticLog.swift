import Position

extension NMEAWorkload {
    /// A synthetic receiver log of at least `size` bytes, for machines without the recorded drives
    /// (the device running `fencepost bench`): the 1 Hz drive of ``GeofenceWorkload/drive(count:spread:seed:)``
    /// written out, each second, as a receiver's burst: GGA, GSA, three GSV, RMC, VTG (checksummed,
    /// CR LF). The mix is a common receiver's default; the recorded drives remain the reference
    /// workload of `Benchmarks/NMEABenchmarks`.
    ///
    /// Deterministic: the same `size` and `seed` give the same bytes. Each burst is whole (the log
    /// ends at a line end).
    /// - Complexity: O(size).
    public static func syntheticLog(size: Int, seed: UInt64 = 0xD417E) -> [UInt8] {
        let perSecond = 560   // bytes of one burst, near enough to size the drive
        let fixes = GeofenceWorkload.drive(count: max(1, size / perSecond + 1), spread: .uniform, seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(size + 2 * perSecond)
        var second = 12 * 3600   // 2026-06-01 12:00:00 UTC onwards
        var i = 0
        while out.count < size {
            let fix = fixes[i % fixes.count]
            i += 1
            let hms = SyntheticSentence.timeOfDay(second % 86_400)
            second += 1
            let c = fix.coordinate ?? Coordinate(latitude: 0, longitude: 0)
            let knots = (fix.speed ?? 0) * 3600 / 1852
            let course = fix.course.map { ($0.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) } ?? 0

            var s = SyntheticSentence("GPGGA")
            s.field(hms + ".00"); s.latitude(c.latitude); s.longitude(c.longitude)
            s.field("1"); s.field("08"); s.fixed(0.9, 1); s.fixed(45.4, 1); s.field("M"); s.fixed(46.9, 1); s.field("M"); s.field(""); s.field("")
            s.end(into: &out)

            s = SyntheticSentence("GPGSA")
            s.field("A"); s.field("3")
            for prn in ["04", "05", "09", "12", "17", "24", "25", "29", "", "", "", ""] { s.field(prn) }
            s.fixed(1.6, 1); s.fixed(0.9, 1); s.fixed(1.3, 1)
            s.end(into: &out)

            let satellites = [(4, 40, 83, 46), (5, 60, 285, 44), (9, 17, 318, 38), (12, 36, 224, 41),
                              (17, 9, 40, 32), (24, 75, 102, 47), (25, 29, 163, 39), (29, 12, 262, 0),
                              (31, 5, 12, 0), (32, 2, 350, 0)]
            for page in 0 ..< 3 {
                s = SyntheticSentence("GPGSV")
                s.field("3"); s.field("\(page + 1)"); s.field("10")
                for (prn, elevation, azimuth, snr) in satellites.dropFirst(page * 4).prefix(4) {
                    s.padded(prn, 2); s.padded(elevation, 2); s.padded(azimuth, 3)
                    if snr > 0 { s.padded(snr, 2) } else { s.field("") }
                }
                s.end(into: &out)
            }

            s = SyntheticSentence("GPRMC")
            s.field(hms + ".00"); s.field("A"); s.latitude(c.latitude); s.longitude(c.longitude)
            s.fixed(knots, 2); s.fixed(course, 2); s.field("010626"); s.field(""); s.field(""); s.field("A")
            s.end(into: &out)

            s = SyntheticSentence("GPVTG")
            s.fixed(course, 2); s.field("T"); s.field(""); s.field("M"); s.fixed(knots, 2); s.field("N")
            s.fixed((fix.speed ?? 0) * 3.6, 2); s.field("K"); s.field("A")
            s.end(into: &out)
        }
        return out
    }
}

/// One NMEA sentence being written: `$`, the address, comma-separated fields, `*hh` CR LF.
struct SyntheticSentence {
    var text: [UInt8] = [UInt8(ascii: "$")]

    init(_ address: String) { text += address.utf8 }

    mutating func field(_ s: String) {
        text.append(UInt8(ascii: ","))
        text += s.utf8
    }

    /// `value` with `digits` decimals (rounded), no exponent.
    mutating func fixed(_ value: Double, _ digits: Int) {
        text.append(UInt8(ascii: ","))
        append(value, digits: digits, integerWidth: 1)
    }

    /// A non-negative integer with leading zeros to `width` digits.
    mutating func padded(_ value: Int, _ width: Int) {
        field(Self.zeroPadded(value, width))
    }

    /// `ddmm.mmmmm,N` / `S`.
    mutating func latitude(_ degrees: Double) {
        text.append(UInt8(ascii: ","))
        angle(abs(degrees), degreeDigits: 2)
        field(degrees < 0 ? "S" : "N")
    }

    /// `dddmm.mmmmm,E` / `W`.
    mutating func longitude(_ degrees: Double) {
        text.append(UInt8(ascii: ","))
        angle(abs(degrees), degreeDigits: 3)
        field(degrees < 0 ? "W" : "E")
    }

    /// The checksum (XOR of the bytes between `$` and `*`), the line end, appended to `out`.
    func end(into out: inout [UInt8]) {
        var sum: UInt8 = 0
        for b in text.dropFirst() { sum ^= b }
        let hex = Array("0123456789ABCDEF".utf8)
        out += text
        out += [UInt8(ascii: "*"), hex[Int(sum >> 4)], hex[Int(sum & 15)], 0x0D, 0x0A]
    }

    private mutating func angle(_ degrees: Double, degreeDigits: Int) {
        let total = Int((degrees * 60 * 100_000).rounded())   // units of 1e-5 minute
        let whole = total / 6_000_000, rest = total % 6_000_000
        text += Self.zeroPadded(whole, degreeDigits).utf8
        text += Self.zeroPadded(rest / 100_000, 2).utf8
        text.append(UInt8(ascii: "."))
        text += Self.zeroPadded(rest % 100_000, 5).utf8
    }

    private mutating func append(_ value: Double, digits: Int, integerWidth: Int) {
        var scale = 1
        for _ in 0 ..< digits { scale *= 10 }
        let total = Int((abs(value) * Double(scale)).rounded())
        if value < 0 && total != 0 { text.append(UInt8(ascii: "-")) }
        text += Self.zeroPadded(total / scale, integerWidth).utf8
        if digits > 0 {
            text.append(UInt8(ascii: "."))
            text += Self.zeroPadded(total % scale, digits).utf8
        }
    }

    static func zeroPadded(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// `hhmmss` of a second of the day.
    static func timeOfDay(_ second: Int) -> String {
        zeroPadded(second / 3600, 2) + zeroPadded(second / 60 % 60, 2) + zeroPadded(second % 60, 2)
    }
}
