/// The NMEA throughput workload, shared by `Benchmarks/NMEABenchmarks` and the on-device
/// `fencepost bench --nmea-log`: a realistic ~50 MB receiver log built in memory from real recorded
/// drives (the device, without them, uses ``syntheticLog(size:seed:)``).
///
/// Pure: the caller reads the drive files (`trackFiles` in `../shared/testdata/tracks`) and passes
/// their bytes; this only repeats them. Real logs (not synthetic sentences) so the mix is what a
/// receiver sends: GGA, RMC, GLL, GSA, VTG and GSV with fixes, outages and null-island starts.
public enum NMEAWorkload {
    /// The NMEA 0183 drives in `../shared/testdata/tracks` (96 min Suwon, 10 min Düsseldorf; 1 Hz).
    public static let trackFiles = [
        "suwon-kr_2011-09-15_car_96min_1hz.nmea",
        "duesseldorf-de_2009-07-07_car_10min_1hz.nmea",
    ]

    /// Default size of the log, bytes.
    public static let defaultSize = 50_000_000

    /// The drives repeated, whole, in turn, until the log holds at least `size` bytes (each drive
    /// ends with a line end, so no sentence is cut at a seam).
    public static func log(repeating drives: [[UInt8]], size: Int = defaultSize) -> [UInt8] {
        precondition(drives.contains { !$0.isEmpty }, "no drive data")
        var out: [UInt8] = []
        out.reserveCapacity(size + (drives.map { $0.count }.max() ?? 0) + 1)
        while out.count < size {
            for drive in drives where !drive.isEmpty {
                out += drive
                if drive.last != 0x0A { out.append(0x0A) }
            }
        }
        return out
    }

    /// Number of `$` in the log: the sentence count, to turn per-iteration figures into per-sentence ones.
    public static func sentenceCount(_ log: [UInt8]) -> Int {
        log.reduce(0) { $0 + ($1 == UInt8(ascii: "$") ? 1 : 0) }
    }
}
