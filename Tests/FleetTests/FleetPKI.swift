import FencepostTestSupport
import Foundation

/// Throwaway TLS material for one test, made with `openssl` at test time (EC P-256: instant):
/// a fleet CA, the broker's certificate (CN and IP SAN 127.0.0.1: libmosquitto verifies the host
/// it was given, here an IP literal), one client certificate per device id (CN = the id, which
/// mosquitto's `use_identity_as_username` makes the user name its ACL matches on `%u`), and a
/// second, unrelated CA (a board given the wrong `ca` file). Keys are written 0600, certificates
/// 0644, all valid for two days.
struct FleetPKI {
    let folder: URL
    var caFile: String { path("ca.crt") }
    var caKey: String { path("ca.key") }
    var serverCert: String { path("server.crt") }
    var serverKey: String { path("server.key") }
    /// A CA that signed nothing the broker shows.
    var wrongCAFile: String { path("wrong-ca.crt") }

    func cert(_ id: String) -> String { path("\(id).crt") }
    func key(_ id: String) -> String { path("\(id).key") }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Makes the CA, the broker's certificate, the wrong CA and a certificate for each of `clients`
    /// (device ids, and e.g. "operator") in `folder`.
    static func make(in folder: URL, clients: [String]) throws -> FleetPKI {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pki = FleetPKI(folder: folder)
        try pki.selfSigned(name: "ca", subject: "/CN=Fencepost test fleet CA")
        try pki.selfSigned(name: "wrong-ca", subject: "/CN=Another CA")
        try pki.signed(name: "server", subject: "/CN=127.0.0.1", extensions: [
            "subjectAltName=IP:127.0.0.1", "basicConstraints=CA:FALSE", "keyUsage=digitalSignature",
            "extendedKeyUsage=serverAuth",
        ])
        for id in clients { try pki.addClient(id) }
        return pki
    }

    /// A client certificate for `id` signed by the fleet CA (CN = id).
    func addClient(_ id: String) throws {
        try signed(name: id, subject: "/CN=\(id)", extensions: [
            "basicConstraints=CA:FALSE", "keyUsage=digitalSignature", "extendedKeyUsage=clientAuth",
        ])
    }

    private func newKey(_ name: String) throws {
        try Self.openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key(name)])
        chmod(key(name), 0o600)
    }

    private func selfSigned(name: String, subject: String) throws {
        try newKey(name)
        try Self.openssl(["req", "-x509", "-new", "-key", key(name), "-sha256", "-days", "2", "-subj", subject,
                          "-out", cert(name)])
    }

    private func signed(name: String, subject: String, extensions: [String]) throws {
        try newKey(name)
        let csr = path("\(name).csr"), ext = path("\(name).ext")
        try Data((extensions.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: ext))
        try Self.openssl(["req", "-new", "-key", key(name), "-subj", subject, "-out", csr])
        try Self.openssl(["x509", "-req", "-in", csr, "-CA", caFile, "-CAkey", caKey, "-CAcreateserial",
                          "-days", "2", "-sha256", "-extfile", ext, "-out", cert(name)])
    }

    static let opensslPath = "/usr/bin/openssl"

    private static func openssl(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: opensslPath)
        p.arguments = arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw SpawnError(message: "openssl \(arguments.joined(separator: " ")): status \(p.terminationStatus): \(String(decoding: text, as: UTF8.self))")
        }
    }
}
