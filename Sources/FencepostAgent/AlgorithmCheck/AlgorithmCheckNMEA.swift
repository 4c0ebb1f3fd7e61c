// The NMEA framer, decoders and epoch assembler on the first three seconds of the demo drive
// (board/demo/duesseldorf-2009-07-07.nmea), fed whole and in random chunks, against the fixes
// read off the sentences by hand (ddmm.mmmmmm → degrees).
import CivilTime
import NMEA
import Position
import SeededRandom

enum AlgorithmCheckNMEA {
    static let snippet = """
        $GPGSV,3,1,10,22,16,277,26,18,09,246,,17,27,047,27,15,15,168,20*73
        $GPGSV,3,2,10,12,57,239,34,30,23,243,14,14,25,313,,26,61,227,34*75
        $GPGSV,3,3,10,09,80,099,35,27,63,109,36*72
        $GPGSV,3,1,10,22,16,277,26,18,09,246,,17,28,049,21,15,15,168,20*74
        $GPGSV,3,2,10,12,57,239,35,30,23,243,14,14,25,313,31,26,61,230,32*76
        $GPGSV,3,3,10,09,80,099,36,27,63,109,36*71
        $GPGGA,144223.0,5114.617879,N,00644.514820,E,1,05,4.8,97.5,M,,,,*34
        $GPRMC,144223.0,A,5114.617879,N,00644.514820,E,15.0,144.6,070709,,,A*5D
        $GPGSA,A,3,09,12,17,26,27,,,,,,,,8.4,4.8,6.9*30
        $GPVTG,144.6,T,,M,15.0,N,27.8,K*6E
        $GPGSV,3,1,10,22,16,277,21,18,09,246,,17,28,049,26,15,15,168,20*74
        $GPGSV,3,2,10,12,57,239,35,30,23,243,14,14,25,313,31,26,61,230,34*70
        $GPGSV,3,3,10,09,80,099,35,27,63,109,36*72
        $GPGGA,144224.0,5114.607848,N,00644.519079,E,1,05,4.2,113.0,M,,,,*0B
        $GPRMC,144224.0,A,5114.607848,N,00644.519079,E,17.2,148.9,070709,,,A*53
        $GPGSA,A,3,09,12,17,26,27,,,,,,,,6.8,4.2,5.3*31
        $GPVTG,148.9,T,,M,17.2,N,31.9,K*6B
        $GPGSV,3,1,10,22,15,277,21,18,09,246,,17,27,047,23,15,15,168,21*72
        $GPGSV,3,2,10,12,57,239,34,30,23,243,14,14,25,313,31,26,61,227,34*77
        $GPGSV,3,3,10,09,80,099,34,27,63,109,35*70
        $GPGGA,144225.0,5114.604119,N,00644.523052,E,1,05,4.6,110.0,M,,,,*03
        $GPRMC,144225.0,A,5114.604119,N,00644.523052,E,18.7,151.4,070709,,,A*53
        $GPGSA,A,3,09,12,17,26,27,,,,,,,,7.5,4.6,6.0*39
        $GPVTG,151.4,T,,M,18.7,N,34.7,K*6F

        """

    /// The snippet's fixes: 2009-07-07 14:42:23…25 UTC, latitude and longitude in degrees.
    static let known: [(seconds: Int64, latitude: Double, longitude: Double)] = [
        (1_246_977_743, 51 + 14.617879 / 60, 6 + 44.514820 / 60),
        (1_246_977_744, 51 + 14.607848 / 60, 6 + 44.519079 / 60),
        (1_246_977_745, 51 + 14.604119 / 60, 6 + 44.523052 / 60),
    ]

    static func run(seed: UInt64, _ digest: inout AlgorithmCheckDigest) -> Int {
        var random = SplitMix64(seed: seed)
        let bytes = Array(snippet.utf8)
        let feeds = 20
        for n in 0 ..< feeds {
            var stream = NMEAStream()
            var fixes: [Fix] = []
            var offset = 0
            while offset < bytes.count {
                // The first feed whole, the others in random chunks of 1 to 80 bytes.
                let length = n == 0 ? bytes.count : min(bytes.count - offset, random.int(1 ... 80))
                bytes[offset ..< offset + length].withUnsafeBytes { chunk in
                    stream.feed(chunk) { fixes.append($0) }
                }
                offset += length
            }
            stream.finish { fixes.append($0) }
            if fixes.count != known.count { digest.difference("feed \(n): \(fixes.count) fixes, not \(known.count)") }
            for (fix, expected) in zip(fixes, known) {
                let seconds = fix.time?.secondsSinceEpoch ?? -1
                let c = fix.coordinate ?? Coordinate(latitude: 0, longitude: 0)
                digest.add(seconds)
                digest.add(c.latitude)
                digest.add(c.longitude)
                digest.add(fix.horizontalError ?? -1)
                let close = abs(c.latitude - expected.latitude) < 1e-9 && abs(c.longitude - expected.longitude) < 1e-9
                if seconds != expected.seconds || !close || !fix.isValid {
                    digest.difference("feed \(n): fix at \(seconds) differs from the sentence at \(expected.seconds)")
                }
            }
        }
        return feeds
    }
}
