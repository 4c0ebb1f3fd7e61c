// Where `replay` takes its zones from: a GeoJSON file (`--zones`), an agent configuration
// (`--config`: its location requests, TOML polygons included, and the zones file it names), or both.
import FencepostAgent
import FencepostLinux
import Geofencing
import LocalNotifications
import TrackFormats

enum ReplayZones {
    /// The zones of the location requests of the configuration at `path`, as the agent would
    /// monitor them (id, shape, entry/exit, dwell, cooldown).
    /// `idProperty` names the zones of its GeoJSON in place of its `zones_id_property`.
    static func fromConfiguration(_ path: String, idProperty: String? = nil) throws(ReplayFailure) -> [ZoneDefinition] {
        let configuration: AgentConfiguration
        do { configuration = try AgentLauncher.load(path) } catch {
            throw ReplayFailure(error.line == nil ? 66 : 78, "\(error)")
        }
        var zones: [ZoneDefinition] = []
        for request in configuration.requests {
            guard case .location(let t) = request.trigger else { continue }
            let shape: ZoneDefinition.Shape
            switch t.shape {
            case .circle(let c): shape = .circle(center: c.center, radius: c.radius)
            case .polygon(let p): shape = .polygon(p.parts)
            }
            zones.append(ZoneDefinition(id: request.identifier, shape: shape, notifyOnEntry: t.notifyOnEntry,
                                        notifyOnExit: t.notifyOnExit, dwell: t.dwell, cooldown: t.cooldown > 0 ? t.cooldown : nil))
        }
        // The zone set's GeoJSON, checked as the agent checks it when it builds the set.
        if let file = configuration.zonesFile {
            let bytes: [UInt8]
            do { bytes = try FileDescriptor.readFile(file) } catch {
                throw ReplayFailure(78, "\(path):\(configuration.lines.zones): zones: \(file): cannot read: \(error)")
            }
            do { zones += try GeoJSONZones.parse(bytes, idProperty: idProperty ?? configuration.zonesIDProperty) } catch {
                throw ReplayFailure(78, error.lines.map { "\(path):\(configuration.lines.zones): zones: \(file): \($0)" }.joined(separator: "\n"))
            }
        }
        return zones
    }
}
