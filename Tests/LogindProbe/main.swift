#if canImport(Glibc)
import Glibc
#endif
import SystemKit
@testable import GuardIdentity
@testable import GuardSessions

// Reads logind's sessions through GuardKit's LogindSessions and the real
// libsystemd, for GuardKitTests, which run it in a mount namespace whose
// /run/systemd holds state files they wrote.
//
//   logind-probe list                 whether logind runs, then each session
//   logind-probe watch READY SECONDS  opens the monitor, lists the sessions,
//                                     creates READY, waits for a change, then
//                                     lists them again after `--`
//   logind-probe enforce lock|end ID LEADER USER UID GRACE-MS
//                                     has a SessionEnforcer that uses logind
//                                     (on the bus DBUS_SYSTEM_BUS_ADDRESS names)
//                                     lock or end logind's session ID, then
//                                     prints `outcome` and what became of it
//
// A session is one line of tab-separated fields (`-` for none): id, user,
// uid, service, tty, leader, runtime directory, bus, display, Wayland
// display, when it opened (whole seconds).

func field(_ value: String?) -> String { value ?? "-" }

func list(_ sessions: LogindSessions) {
    for session in sessions.current() {
        print([field(session.sessionID), session.user, String(session.uid), session.service, field(session.tty),
               String(session.leader), field(session.runtimeDirectory), field(session.bus), field(session.display),
               field(session.waylandDisplay), String(Int(session.openedAt.seconds))].joined(separator: "\t"))
    }
}

func fail(_ message: String) -> Never {
    let line = Array("logind-probe: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "enforce" {
    let words = Array(arguments.dropFirst())
    guard words.count == 6, let consequence = SessionConsequence(rawValue: words[0]), let leader = pid_t(words[2]),
          let uid = UInt32(words[4]), let grace = Int64(words[5]) else {
        fail("usage: enforce lock|end ID LEADER USER UID GRACE-MS")
    }
    var limits = GuardLimits()
    limits.sessionEndGrace = .milliseconds(grace)
    let enforcer = SessionEnforcer(limits: limits, logger: Logger(label: "logind-probe"), usesLogind: true)
    let session = LoginSession(user: words[3], uid: uid, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                               waylandDisplay: nil, bus: nil, sessionID: words[1], leader: leader, openedAt: .now)
    enforcer.enforce(consequence, on: [MonitorSession(name: words[1], session: session)], reason: "the probe asked")
    guard enforcer.waitUntilIdle(until: .now + .milliseconds(grace * 4 + 10_000)) else { fail("the enforcer did not finish") }
    enforcer.stop()
    for outcome in enforcer.recentOutcomes() { print("outcome \(outcome.result) \(outcome.note ?? "-")") }
    exit(0)
}
print("running \(LogindSessions.isRunning()) leaders \(LogindSessions.readsLeaders) start-times \(LogindSessions.readsStartTimes)")
let sessions: LogindSessions
do throws(LogindFailure) {
    sessions = try LogindSessions.open()
} catch {
    fail("\(error)")
}
switch arguments.first {
case "list":
    list(sessions)
case "watch":
    guard arguments.count == 3, let seconds = Int32(arguments[arguments.startIndex + 2]) else { fail("usage: watch READY SECONDS") }
    list(sessions)
    let ready = open(arguments[arguments.startIndex + 1], O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
    guard ready >= 0 else { fail("cannot create the ready file") }
    close(ready)
    var pollfd = Glibc.pollfd(fd: sessions.changeDescriptor, events: sessions.changeEvents, revents: 0)
    let timeout = min(seconds * 1000, sessions.changeTimeout ?? Int32.max)
    let found = poll(&pollfd, 1, timeout)
    print(found == 1 ? "changed" : "unchanged")
    sessions.acknowledgeChange()
    var again = Glibc.pollfd(fd: sessions.changeDescriptor, events: sessions.changeEvents, revents: 0)
    print(poll(&again, 1, 0) == 1 ? "still readable" : "acknowledged")
    print("--")
    list(sessions)
default:
    fail("usage: logind-probe list | watch READY SECONDS")
}
