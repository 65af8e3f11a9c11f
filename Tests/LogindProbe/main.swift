#if canImport(Glibc)
import Glibc
#endif
import GuardKit

// Reads logind's sessions through GuardKit's LogindSessions and the real
// libsystemd, for GuardKitTests, which run it in a mount namespace whose
// /run/systemd holds state files they wrote.
//
//   logind-probe list                 whether logind runs, then each session
//   logind-probe watch READY SECONDS  opens the monitor, lists the sessions,
//                                     creates READY, waits for a change, then
//                                     lists them again after `--`
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
