// swift-tools-version: 6.1
//
// Fencepost: Apple's local notifications rebuilt as a lean Linux agent for a vehicle board.
// Layout (design §1): pure core targets (no Foundation, no I/O) under a thin Linux shell.
//
//   fencepost (executable)
//        |
//   FencepostLinux      — the only target with syscalls (zone files, later epoll, GPIO, SQLite …)
//        |
//   CivilTime  TimingWheel  FencepostJSON   — pure core
//
// Benchmarks live in their own package (Benchmarks/Package.swift) so that a plain `swift test`
// does not build ordo-one/benchmark.
import PackageDescription

let package = Package(
    name: "Fencepost",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "fencepost", targets: ["fencepost"]),
        .executable(name: "fencepost-agent", targets: ["fencepost-agent"]),
        .library(name: "CivilTime", targets: ["CivilTime"]),
        .library(name: "TimingWheel", targets: ["TimingWheel"]),
        .library(name: "FencepostJSON", targets: ["FencepostJSON"]),
        .library(name: "ConfigFile", targets: ["ConfigFile"]),
        .library(name: "FencepostLinux", targets: ["FencepostLinux"]),
        .library(name: "FencepostBenchHarness", targets: ["FencepostBenchHarness"]),
        .library(name: "Position", targets: ["Position"]),
        .library(name: "Geofencing", targets: ["Geofencing"]),
        .library(name: "NMEA", targets: ["NMEA"]),
        .library(name: "LocalNotifications", targets: ["LocalNotifications"]),
        .library(name: "Annunciator", targets: ["Annunciator"]),
        .library(name: "SeededRandom", targets: ["SeededRandom"]),
        .library(name: "RecentIDs", targets: ["RecentIDs"]),
        .library(name: "Fleet", targets: ["Fleet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // HeapModule, for the CLI only (never on the agent's Embedded path).
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // Pure core.
        .target(name: "CivilTime"),
        .target(name: "TimingWheel"),
        // A bounded memory of recent identifiers (paging, duplicate commands and events).
        .target(name: "RecentIDs"),
        .target(name: "FencepostJSON"),
        .target(name: "ConfigFile", dependencies: ["FencepostJSON"]),
        .target(name: "Position", dependencies: ["CivilTime", "CLibm"]),
        .target(name: "Geofencing", dependencies: ["Position", "CivilTime", "CLibm"]),
        .target(name: "NMEA", dependencies: ["Position", "CivilTime"]),
        .target(name: "TrackFormats", dependencies: ["Position", "CivilTime", "FencepostJSON", "NMEA"]),
        // The fleet link's protocol: topics, payloads, the desired document, commands, outbox policy.
        .target(name: "Fleet", dependencies: ["CivilTime", "FencepostJSON", "RecentIDs"]),
        .target(name: "LocalNotifications", dependencies: ["CivilTime", "TimingWheel", "RecentIDs", "Geofencing", "Position", "FencepostJSON"]),
        // Alerts → buzzer/LED/badge changes; push-button debouncing.
        .target(name: "Annunciator"),
        // The one benchmark harness, kept apart from the agent's targets (as swift-nio keeps
        // NIOTestUtils apart): the seeded workloads, the cases and the measuring loop that
        // `fencepost bench`, `fencepost-agent --bench` and the Benchmarks/ package all run.
        .target(name: "FencepostBenchHarness", dependencies: ["CivilTime", "FencepostJSON", "FencepostLinux", "Geofencing", "LocalNotifications", "NMEA", "Position", "SeededRandom", "CLibm"]),
        // The one seeded generator of simulations, tests and workloads.
        .target(name: "SeededRandom", dependencies: ["CLibm"]),
        // math.h for the cores in the Embedded Swift build, which has no Glibc module (board/cross-build).
        .target(name: "CLibm"),
        // Shell.
        .target(name: "FencepostLinux", dependencies: ["CivilTime", "CSQLite", "CFencepostLinux", "CGPIOD", "CGPS", "CMosquitto", "Position", "Fleet", "SeededRandom"]),
        // The agent: the notification center with its durable state, and (later) the daemon.
        .target(name: "FencepostAgent", dependencies: ["LocalNotifications", "FencepostLinux", "FencepostJSON", "CivilTime", "ConfigFile", "Annunciator", "TrackFormats", "Position", "NMEA", "SeededRandom", "Geofencing", "TimingWheel", "Fleet", "RecentIDs"]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Linux headers Glibc does not export (epoll, timerfd, signalfd) and _GNU_SOURCE shims.
        .target(name: "CFencepostLinux"),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        // libgps's types; the library itself is loaded at first use (CFencepostLinux/libgps_loader.c).
        .systemLibrary(name: "CGPS", providers: [.apt(["libgps-dev"])]),
        // libmosquitto (the fleet link's MQTT client), loaded at first use; its API declared in the
        // shim, so no build needs the library or its header.
        .target(name: "CMosquitto"),
        .executableTarget(
            name: "fencepost",
            dependencies: [
                "CivilTime", "FencepostJSON", "FencepostLinux", "Geofencing", "NMEA", "Position", "TrackFormats",
                "LocalNotifications", "FencepostAgent", "FencepostBenchHarness",
                "ConfigFile", "Fleet", "RecentIDs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // The agent alone, for systemd: no argument parser, no Foundation (resident memory).
        .executableTarget(name: "fencepost-agent", dependencies: ["FencepostAgent", "FencepostLinux", "FencepostBenchHarness"]),
        // Tests. What several test targets share: child processes (the built binaries run to their
        // end, helper programs beside a test), loopback sockets, the required-tool check.
        .target(name: "FencepostTestSupport", dependencies: ["CFencepostLinux", "FencepostJSON"], path: "Tests/FencepostTestSupport"),
        .testTarget(name: "CivilTimeTests", dependencies: ["CivilTime", "FencepostTestSupport", "FencepostLinux", "SeededRandom"]),
        .testTarget(name: "TimingWheelTests", dependencies: ["TimingWheel", "SeededRandom"]),
        .testTarget(name: "RecentIDsTests", dependencies: ["RecentIDs", "SeededRandom"]),
        .testTarget(name: "FencepostCLITests", dependencies: ["fencepost", "FencepostTestSupport", "FencepostJSON", "FencepostLinux", "SeededRandom"]),
        .testTarget(name: "FencepostJSONTests", dependencies: ["FencepostJSON", "SeededRandom"]),
        .testTarget(name: "GeofencingTests", dependencies: ["Geofencing", "FencepostTestSupport", "SeededRandom"]),
        .testTarget(name: "NMEATests", dependencies: ["NMEA", "FencepostTestSupport", "SeededRandom"]),
        .testTarget(name: "TrackFormatsTests", dependencies: ["TrackFormats", "SeededRandom"]),
        .testTarget(name: "LocalNotificationsTests", dependencies: ["LocalNotifications", "FencepostLinux", "FencepostJSON", "Geofencing", "Position", "CivilTime", "SeededRandom"]),
        .testTarget(name: "FencepostAgentTests", dependencies: ["FencepostAgent", "LocalNotifications", "FencepostLinux", "CivilTime", "SeededRandom", "Annunciator", "Fleet"]),
        .testTarget(name: "FencepostStoreTests", dependencies: ["FencepostLinux", "SeededRandom"]),
        .testTarget(name: "FencepostLinuxTests", dependencies: ["FencepostLinux", "FencepostTestSupport", "SeededRandom"]),
        .testTarget(name: "ConfigFileTests", dependencies: ["ConfigFile", "FencepostJSON", "LocalNotifications", "SeededRandom"]),
        .testTarget(name: "AnnunciatorTests", dependencies: ["Annunciator", "SeededRandom"]),
        .testTarget(name: "FencepostGPIOTests", dependencies: ["FencepostLinux", "FencepostTestSupport", "Annunciator", "NMEA", "Position"]),
        // The fleet link against a real mosquitto: TLS material, the ACL, a fault proxy (fault_proxy.py).
        .testTarget(name: "FleetTests", dependencies: ["Fleet", "FencepostAgent", "FencepostTestSupport", "FencepostJSON", "CivilTime", "FencepostLinux", "CFencepostLinux", "SeededRandom", "RecentIDs", "fencepost"], exclude: ["fault_proxy.py"]),
    ],
    swiftLanguageModes: [.v6]
)
