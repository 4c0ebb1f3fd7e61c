// How the harness's figures are written, without Foundation (the Embedded build has none):
// fixed decimals, durations with their unit, rates and ratios.

/// Figures as text.
public enum BenchFormat {
    /// `value` with `digits` decimals, rounded, no exponent.
    public static func decimal(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0 ..< digits { scale *= 10 }
        let total = Int64((abs(value) * scale).rounded())
        let whole = total / Int64(scale), fraction = total % Int64(scale)
        var s = (value < 0 && total != 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let f = String(fraction)
            s += "." + String(repeating: "0", count: digits - f.count) + f
        }
        return s
    }

    /// Three significant figures or so: "48 ns", "1.23 µs", "31.2 ms".
    public static func duration(_ ns: Double) -> String {
        func scaled(_ v: Double, _ unit: String) -> String {
            (v >= 100 ? decimal(v, 0) : v >= 10 ? decimal(v, 1) : decimal(v, 2)) + " " + unit
        }
        if ns < 1_000 { return (ns >= 10 ? decimal(ns, 0) : decimal(ns, 1)) + " ns" }
        if ns < 1_000_000 { return scaled(ns / 1e3, "µs") }
        if ns < 1_000_000_000 { return scaled(ns / 1e6, "ms") }
        return scaled(ns / 1e9, "s")
    }

    /// "21.3M", "312k", "45.1".
    public static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1e9 { return decimal(perSecond / 1e9, 2) + "G" }
        if perSecond >= 1e6 { return decimal(perSecond / 1e6, perSecond >= 1e8 ? 0 : 1) + "M" }
        if perSecond >= 1e3 { return decimal(perSecond / 1e3, perSecond >= 1e5 ? 0 : 1) + "k" }
        return decimal(perSecond, perSecond >= 100 ? 0 : 1)
    }

    /// "36,868×", "412×", "1.6×".
    public static func ratio(_ r: Double) -> String { (r >= 100 ? grouped(decimal(r, 0)) : r >= 10 ? decimal(r, 1) : decimal(r, 2)) + "×" }

    /// "36868" → "36,868".
    public static func grouped(_ digits: String) -> String {
        var out = ""
        for (i, ch) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return String(out.reversed())
    }
}
