import FencepostJSON
import FencepostTestSupport
import Foundation

/// The operator's side of the fleet tests: `fencepost fleet …` against a broker, and what the
/// broker holds retained on a topic, as `mosquitto_sub` reads it.
extension MosquittoBroker {
    /// `fencepost fleet ARGUMENTS --broker` this broker.
    func fleet(_ arguments: [String]) throws -> Binaries.Output {
        try Binaries.run(["fleet"] + arguments + ["--broker", address])
    }

    /// The retained message on `topic` as text (its first line), nil when none came within
    /// `waitSeconds`.
    func retainedText(_ topic: String, waitSeconds: Int = 2) throws -> String? {
        let out = try FleetTools.run(["/usr/bin/mosquitto_sub", "--unix", socketPath, "-t", topic, "-C", "1", "-W", "\(waitSeconds)"])
        guard out.status == 0, let line = out.output.split(separator: "\n").first else { return nil }
        return String(line)
    }

    /// ``retainedText(_:waitSeconds:)`` parsed as JSON.
    func retainedJSON(_ topic: String, waitSeconds: Int = 2) throws -> JSONValue? {
        try retainedText(topic, waitSeconds: waitSeconds).map { try JSONValue.parse($0) }
    }
}
