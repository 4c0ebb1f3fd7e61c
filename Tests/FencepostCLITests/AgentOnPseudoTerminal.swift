import FencepostLinux
import FencepostTestSupport
import Foundation
import Testing

extension AgentProcess {
    /// The link the agent reads as its serial GPS in ``startOnPseudoTerminal(baud:before:after:)``.
    var gpsLink: String { dir.appendingPathComponent("gps").path }

    /// Starts the agent on a pseudo-terminal as its serial GPS, reached through ``gpsLink`` (as a
    /// udev rule gives /dev/serial0), with the console GPIO; `before` and `after` are config text
    /// around the `[gps]` table. Waits for "GPS: reading"; the caller writes NMEA to the terminal.
    func startOnPseudoTerminal(baud: Int = 9600, before: String = "", after: String = "") throws -> PseudoTerminal {
        let pty = try PseudoTerminal()
        try FileManager.default.createSymbolicLink(atPath: gpsLink, withDestinationPath: pty.devicePath)
        try writeConfig(before + "[gps]\nsource = \"serial\"\ndevice = \"\(gpsLink)\"\nbaud = \(baud)\n\n" + DaemonTests.gpio + after)
        try start()
        #expect(waitForLog("GPS: reading"), "log:\n\(stderr)")
        return pty
    }
}
