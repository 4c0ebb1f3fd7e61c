import Foundation
@testable import FencepostLinux

/// A temporary folder for database files; removed when released.
final class TempFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fencepost-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }
    func bytes(_ name: String) throws -> Data { try Data(contentsOf: url.appendingPathComponent(name)) }
    func write(_ name: String, _ data: Data) throws -> String {
        try data.write(to: url.appendingPathComponent(name))
        return path(name)
    }
}

/// Sample rows.
enum Sample {
    static func request(_ id: String, _ n: Int = 0) -> StoredRequest {
        StoredRequest(id: id, json: #"{"id":"\#(id)","n":\#(n)}"#, state: #"{"lastFire":\#(n)}"#)
    }
    static func delivery(_ id: String, request: String = "water", scheduledAt: Int64? = 1_767_225_600) -> StoredDelivery {
        StoredDelivery(deliveryID: id, requestID: request, json: #"{"title":"Water"}"#, scheduledAt: scheduledAt,
                       deliveredAt: 1_767_225_601, outcome: "delivered")
    }
    static func outcome(_ n: Int) -> StoredOutcome {
        StoredOutcome(at: Int64(1_767_225_600 + n), requestID: "r\(n % 3)", event: "missed", detail: "n=\(n)")
    }
}
