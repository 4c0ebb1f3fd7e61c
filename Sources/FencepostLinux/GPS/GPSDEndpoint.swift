/// Where gpsd listens: the `gpsd://host:port` source of the configuration (design §6).
public struct GPSDEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    /// Decimal port (libgps takes it as text).
    public var port: String

    public init(host: String = "localhost", port: String = GPSDClient.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Parses `gpsd://host:port`, `gpsd://host` (port 2947), `gpsd://[::1]:2947`, `gpsd://`
    /// (localhost:2947). Nil for another scheme, a path, an empty or bracket-less IPv6 host with a
    /// port, or a port outside 1…65535.
    ///
    /// - Complexity: O(n) in the length of `url`.
    public init?(url: String) {
        let scheme = "gpsd://"
        guard url.hasPrefix(scheme) else { return nil }
        var rest = Substring(url.dropFirst(scheme.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains(where: { $0 == " " || $0 == "\t" }) else { return nil }
        var host: Substring
        var port: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex) ..< close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = after.dropFirst()
            }
            guard !host.isEmpty else { return nil }
        } else {
            let colons = rest.filter { $0 == ":" }.count
            guard colons <= 1 else { return nil }  // IPv6 needs brackets
            if let colon = rest.firstIndex(of: ":") {
                host = rest[..<colon]
                port = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            if host.isEmpty {
                guard port == nil else { return nil }
                host = "localhost"
            }
        }
        if let p = port {
            guard !p.isEmpty, p.count <= 5, p.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let n = Int(p), (1 ... 65535).contains(n) else { return nil }
            self.port = String(n)
        } else {
            self.port = GPSDClient.defaultPort
        }
        self.host = String(host)
    }

    /// `gpsd://host:port`.
    public var description: String {
        host.contains(":") ? "gpsd://[\(host)]:\(port)" : "gpsd://\(host):\(port)"
    }
}

extension GPSDClient {
    /// Connects to `endpoint`. See ``init(host:port:)``.
    public convenience init(_ endpoint: GPSDEndpoint) throws(GPSDError) {
        try self.init(host: endpoint.host, port: endpoint.port)
    }
}
