// swift-tools-version: 6.1
//
// Fencepost benchmarks: a package of its own so that `swift test` at the root never builds
// ordo-one/package-benchmark. Run from this folder:
//
//     swift package --disable-sandbox benchmark --target TimingWheelBenchmarks
//     swift package --disable-sandbox benchmark --target NextFireBenchmarks
//     swift package --disable-sandbox benchmark --target NMEABenchmarks
//     swift package --disable-sandbox benchmark --target NotificationCenterBenchmarks
//     swift package --disable-sandbox benchmark --target PolygonBenchmarks   (board/install-deps --benchmarks: GEOS)
//
// Each benchmark suite is one executable target under its own folder; to add one, append a
// `benchmarkTarget(...)` line to `targets` below, and its title to SUITES in `Benchmarks/report`.
// `Benchmarks/run NAME` runs one suite into results/NAME.json; `Benchmarks/report` writes
// README.md (one table per suite) from results/.
import PackageDescription

/// An executable target run by the benchmark plugin; `path` defaults to a folder named like it.
func benchmarkTarget(_ name: String, dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "package-benchmark")] + dependencies,
        path: name,
        plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
    )
}

/// The root package is a path dependency, so SwiftPM names it after its folder (`main` in a
/// work tree, anything in a fresh clone): read that name rather than hard-coding it.
let root = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main")

let package = Package(
    name: "FencepostBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(
            url: "https://github.com/ordo-one/package-benchmark", from: "1.38.0",
            traits: ["MallocInterposer"]
        ),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        benchmarkTarget(
            "TimingWheelBenchmarks",
            dependencies: [
                .product(name: "TimingWheel", package: root),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        benchmarkTarget(
            "NextFireBenchmarks",
            dependencies: [
                .product(name: "CivilTime", package: root),
                .product(name: "FencepostLinux", package: root),
                .product(name: "FencepostBenchHarness", package: root),
            ]
        ),
        benchmarkTarget(
            "NMEABenchmarks",
            dependencies: [
                .product(name: "NMEA", package: root),
                .product(name: "Position", package: root),
                .product(name: "FencepostBenchHarness", package: root),
            ]
        ),
        benchmarkTarget(
            "GeofenceBenchmarks",
            dependencies: [
                .product(name: "Geofencing", package: root),
                .product(name: "FencepostLinux", package: root),
                .product(name: "Position", package: root),
                .product(name: "FencepostBenchHarness", package: root),
            ]
        ),
        benchmarkTarget(
            "NotificationCenterBenchmarks",
            dependencies: [
                .product(name: "LocalNotifications", package: root),
                .product(name: "CivilTime", package: root),
                .product(name: "FencepostLinux", package: root),
                .product(name: "FencepostBenchHarness", package: root),
            ]
        ),
        // Point in polygon against GEOS's prepared geometry, the baseline: GEOS is linked here only.
        benchmarkTarget(
            "PolygonBenchmarks",
            dependencies: [
                "CGEOS",
                .product(name: "Geofencing", package: root),
                .product(name: "Position", package: root),
                .product(name: "FencepostJSON", package: root),
                .product(name: "SeededRandom", package: root),
            ]
        ),
        .systemLibrary(name: "CGEOS", path: "CGEOS", pkgConfig: "geos", providers: [.apt(["libgeos-dev"])]),
    ],
    swiftLanguageModes: [.v6]
)
