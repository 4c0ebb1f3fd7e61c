// The daemon's side of the fleet link (FleetLink/FleetLink.swift): made at start when the
// configuration has [fleet], its descriptor in the loop under `.fleet`, its commands and desired
// documents through the control service's own methods.
import CivilTime
import Fleet
import FencepostJSON
import FencepostLinux
import Geofencing
import LocalNotifications
import Position

extension AgentDaemon {
    /// Makes the link (loads libmosquitto) and wires it: descriptor, outbox hook, control calls.
    func setUpFleet() throws(DaemonError) {
        guard let fc = configuration.fleet else { return }
        // The closures hold the daemon strongly until tearDownFleet (no `unowned` in Embedded Swift).
        let link = try FleetLink(configuration: fc, store: center.store, meta: center.meta, log: log, clock: { [self] in self.clock })
        link.wallIsGNSS = { [self] in self.wallIsGNSS }
        link.maximumDesiredBytes = { [self] in self.configuration.maximumMessageBytes }
        link.client.watcher = { [loop, log] change in
            do throws(Errno) {
                switch change {
                case .add(let fd, let interest): try loop.register(fd, for: interest, token: .fleet)
                case .modify(let fd, let interest): try loop.modify(fd, for: interest, token: .fleet)
                case .remove(let fd): try loop.unregister(fd)
                case .forget: break
                }
            } catch {
                log.error("fleet: epoll: \(error)")
            }
        }
        link.callControl = { [self] method, params in
            let reply = self.control.call(method, params: params, center: self.center, clock: self.clock, answeredBy: .remote, status: { self.status })
            if let f = reply.fatal { self.fatal(f) }
            self.act(on: reply.output)
            return reply.result
        }
        link.healthFields = { [self] h in
            h.pending = self.center.engine.pendingCount
            let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
            h.fixAgeSeconds = self.gps.lastFixAt.map { Double(now - $0) / 1e9 }
            h.fixError = self.gps.lastFix?.horizontalError
            h.freeDiskBytes = FileSystemSpace.available(at: self.configuration.statePath)
            // The GeoJSON's content hash (with the build limits): boards with the same zones say the same.
            h.zoneSetHash = self.zones.mapped.map { $0.set.sourceHash.hexDigits }
        }
        link.currentAlert = { [self] in self.outputs.currentAlert }
        link.readPosition = { [self] in
            guard let fix = self.gps.lastFix, let c = fix.coordinate else { return nil }
            return (latitude: c.latitude, longitude: c.longitude, accuracy: fix.horizontalError)
        }
        center.eventRecorder = { [link] out, source in link.outboxChanges(for: out, answeredBy: source) }
        // The catch-up deliveries of the start were committed before the link existed: recorded
        // now, in a transaction of their own (a crash in between loses their events, never repeats them).
        let caughtUp = link.outboxChanges(for: center.restoreOutput, answeredBy: .socket)
        if !caughtUp.isEmpty {
            do { try center.store.apply(caughtUp, sync: false) } catch { throw DaemonError("the state file could not be written: \(error)") }
        }
        fleet = link
        setUpFleetBlobs(link)
    }

    /// At shutdown: the Will sent on purpose, and the closures that hold the daemon let go
    /// (strong captures: Embedded Swift has no `weak`/`unowned`).
    func tearDownFleet() {
        guard let link = fleet else { return }
        link.stop()
        link.callControl = { _, _ in .failure(RPCError(.serverError, "stopping")) }
        link.healthFields = { _ in }
        link.currentAlert = { nil }
        link.readPosition = { nil }
        link.buildZoneSet = { _ in }
        link.readRequests = { _ in }
        link.applyRequests = { _, _, _ in }
        link.wallIsGNSS = { false }
        link.maximumDesiredBytes = { 0 }
        link.readClock = { EngineClock(wall: WallInstant(secondsSinceEpoch: 0), wallTrusted: false, monotonic: MonotonicInstant(nanosecondsSinceBoot: 0)) }
        link.client.watcher = { _ in }
        center.eventRecorder = nil
        fleet = nil
    }
}
