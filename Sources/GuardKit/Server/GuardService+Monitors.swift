import GuardProtocol
import SystemKit
import Varlink
import VarlinkServerKit
import GuardSessions

/// `ListMonitors`, `IdentifyMonitor` and `WatchMonitorAlerts`: the monitors
/// the Guard runs in the children's sessions (``MonitorKeeper``).
extension GuardService {
    func listMonitors(_ parameters: Guard.ListMonitors.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            let shown = monitors.list().filter { requester.uid == 0 || $0.user == requester.name
                || policy.may(requester, administer: $0.user) }
            return Guard.ListMonitors.Reply(monitors: shown.map(\.wire)).object
        }
    }

    func identifyMonitor(_ parameters: Guard.IdentifyMonitor.Parameters, _ served: ServedCall) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            let peer = served.connection.peer
            let found = monitors.monitor(containing: peer.pid, uid: peer.uid, pidfd: peer.pidfd?.rawValue)
            return Guard.IdentifyMonitor.Reply(monitor: found?.wire).object
        }
    }

    /// Alerts of the caller's children's monitors as they happen, within the
    /// connection's bound of streams.
    func watchMonitorAlerts(_ parameters: Guard.WatchMonitorAlerts.Parameters, _ served: ServedCall) {
        let (connection, session) = (served.connection, served.session)
        guard let requester = streamRequester(served) else { return }
        let token = monitors.watchAlerts { [policy] alert in
            guard requester.uid == 0 || policy.may(requester, administer: alert.user) else { return }
            connection.reply(Guard.WatchMonitorAlerts.Reply(alert: alert.wire).object, continues: true)
        }
        guard session.keepSubscription({ [monitors] in monitors.unwatchAlerts(token) }) else { return }
        connection.reply(Guard.WatchMonitorAlerts.Reply(alert: nil).object, continues: true)
    }
}

extension MonitorSnapshot {
    /// The `Monitor` type of the interface.
    var wire: Guard.Monitor {
        Guard.Monitor(appID: appID, user: user, session: session, state: Guard.MonitorState(state), pid: Int64(pid),
                      startedAt: startedAt.seconds, restarts: Int64(restarts), ended: ended,
                      restartAt: restartAt?.seconds)
    }
}

extension Guard.MonitorState {
    /// A monitor's state as the interface names it.
    init(_ state: MonitorSnapshot.State) {
        switch state {
        case .running: self = .running
        case .waiting: self = .waiting
        case .stopped: self = .stopped
        }
    }
}

extension MonitorAlert {
    /// The `MonitorAlert` type of the interface.
    var wire: Guard.MonitorAlert {
        Guard.MonitorAlert(appID: appID, appName: appName, user: user, session: session, restarts: Int64(restarts),
                           windowSeconds: Int64(windowSeconds), ended: ended, waitingSeconds: waitingSeconds.map(Int64.init),
                           consequence: consequence.map { $0 == .lock ? .lock : .end })
    }
}
