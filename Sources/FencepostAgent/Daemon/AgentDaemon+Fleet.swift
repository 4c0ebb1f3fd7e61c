// The daemon's side of the fleet link (FleetLink/FleetLink.swift): made at start when the
// configuration has [fleet], its descriptor in the loop under `.fleet`, its commands and desired
// documents through the control service's own methods.
import FencepostJSON
import FencepostLinux
import LocalNotifications

extension AgentDaemon {
    /// Makes the link (loads libmosquitto) and wires it: descriptor, outbox hook, control calls.
    func setUpFleet() throws(DaemonError) {
        guard let fc = configuration.fleet else { return }
        let link = try FleetLink(configuration: fc, store: center.store, log: log, clock: { [unowned self] in self.clock })
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
        link.callControl = { [unowned self] method, params in
            let reply = self.control.call(method, params: params, center: self.center, clock: self.clock, status: { self.status })
            if let f = reply.fatal { self.fatal(f) }
            self.act(on: reply.output)
            return reply.result
        }
        link.healthFields = { [unowned self] h in
            h.pending = self.center.engine.pendingCount
            let now = SystemClocks.boottimeNow().nanosecondsSinceBoot
            h.fixAgeSeconds = self.gps.lastFixAt.map { Double(now - $0) / 1e9 }
            h.fixError = self.gps.lastFix?.horizontalError
        }
        center.eventRecorder = { [unowned link] out in link.outboxChanges(for: out) }
        fleet = link
    }
}
