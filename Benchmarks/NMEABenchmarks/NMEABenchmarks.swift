// NMEA 0183 throughput: the framer alone, framer + decoders, and the whole NMEAStream (framer +
// decoders + epoch assembler) over a ~50 MB log built from the real drives in
// ../shared/testdata/tracks (FencepostBenchHarness.NMEAWorkload).
//
// One iteration is one pass over the whole log. MB/s = log size / wall-clock time per iteration
// (the figures under "Time (wall clock)" are per pass). mallocCountTotal is per pass: 0 means no
// allocation per sentence or per call. (Adding `.cpuTotal` makes the harness itself count 16
// mallocs per pass, independent of the code measured.)

import Benchmark
import FencepostBenchHarness
import Foundation
import NMEA
import Position

let benchmarks: @Sendable () -> Void = {
    #if DEBUG
    fatalError("Benchmarks must be built in release.")
    #endif

    let tracks = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/testdata/tracks").standardizedFileURL
    let drives = NMEAWorkload.trackFiles.map { name -> [UInt8] in
        guard let data = FileManager.default.contents(atPath: tracks.appendingPathComponent(name).path) else {
            fatalError("cannot read \(name) in \(tracks.path)")
        }
        return [UInt8](data)
    }
    let log = NMEAWorkload.log(repeating: drives)
    let sentences = NMEAWorkload.sentenceCount(log)
    print("NMEA workload: \(log.count) bytes, \(sentences) sentences")

    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 1, scalingFactor: .one,
        maxDuration: .seconds(10), maxIterations: 20)

    Benchmark("framer, \(log.count / 1_000_000) MB (\(sentences) sentences)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            var framer = NMEAFramer()
            var n = 0
            log.withUnsafeBytes { bytes in
                benchmark.startMeasurement()
                framer.feed(bytes) { n &+= $0.count }
                benchmark.stopMeasurement()
            }
            blackHole(n)
        }
    }

    Benchmark("framer+decoders, \(log.count / 1_000_000) MB", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            var framer = NMEAFramer()
            var decoder = NMEADecoder()
            var n = 0
            log.withUnsafeBytes { bytes in
                benchmark.startMeasurement()
                framer.feed(bytes) { sentence in
                    if decoder.decode(sentence) != nil { n &+= 1 }
                }
                benchmark.stopMeasurement()
            }
            blackHole(n)
        }
    }

    Benchmark("NMEAStream (framer+decoders+assembler), \(log.count / 1_000_000) MB", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            var stream = NMEAStream()
            var n = 0
            var latitude = 0.0
            log.withUnsafeBytes { bytes in
                benchmark.startMeasurement()
                stream.feed(bytes) { fix in
                    n &+= 1
                    latitude += fix.coordinate?.latitude ?? 0
                }
                stream.finish { _ in n &+= 1 }
                benchmark.stopMeasurement()
            }
            blackHole(n)
            blackHole(latitude)
        }
    }
}
