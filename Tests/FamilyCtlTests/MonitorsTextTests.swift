@testable import FamilyCtl
import GuardProtocol
import SystemKit
import Testing
import Varlink

/// `familyctl monitors`: one line per monitor the Guard lists, every name a
/// child could choose escaped; and the `--json` form with dates.
@Suite struct MonitorsTextTests {
    @Test func eachStateIsOneLineAndHostileNamesAreEscaped() {
        let running = Guard.Monitor(appID: "org.example.App", user: "kid", session: "c2", state: .running, pid: 4242,
                                    startedAt: 1_800_000_000, restarts: 1)
        let waiting = Guard.Monitor(appID: "org.example.\u{1B}[2JApp", user: "kid", session: "pam-77\n", state: .waiting,
                                    pid: 0, startedAt: 1_800_000_000, restarts: 12, ended: "exit status 1",
                                    restartAt: 1_800_000_030)
        let stopped = Guard.Monitor(appID: "org.example.App", user: "kid", session: "c3", state: .stopped, pid: 0,
                                    startedAt: 1_800_000_000, restarts: 0, ended: "signal 15")
        let started = UnixTime(seconds: 1_800_000_000).localDescription
        let again = UnixTime(seconds: 1_800_000_030).localDescription
        let lines = FamilyCtl.monitorsList([running, waiting, stopped]).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines == [
            "org.example.App for kid in session c2: running as pid 4242 since \(started), restarted 1 time",
            "org.example.\\x1B[2JApp for kid in session pam-77\\x0A: waiting, starts again at \(again) after exit status 1, "
                + "restarted 12 times",
            "org.example.App for kid in session c3: stopped after signal 15, restarted 0 times",
        ])
        #expect(FamilyCtl.monitorsList([]) == "No monitors are running that you may see.")
    }

    @Test func theJSONFormIsTheReplyWithDates() throws {
        let waiting = Guard.Monitor(appID: "org.example.App", user: "kid", session: "c2", state: .waiting, pid: 0,
                                    startedAt: 0, restarts: 2, ended: "signal 9", restartAt: 60)
        let running = Guard.Monitor(appID: "org.example.App", user: "kid", session: "c3", state: .running, pid: 9,
                                    startedAt: 0, restarts: 0)
        let parsed = try JSONValue(parsing: Array(FamilyCtl.monitorsJSON([waiting, running]).utf8))
        let array = try #require(parsed.objectValue?["monitors"]?.arrayValue)
        let rows = array.compactMap { $0.objectValue }
        #expect(rows.count == 2)
        #expect(rows[0]["startedAt"] == .string("1970-01-01T00:00:00Z"))
        #expect(rows[0]["restartAt"] == .string("1970-01-01T00:01:00Z"))
        #expect(rows[0]["ended"] == .string("signal 9"))
        #expect(rows[1]["restartAt"] == nil || rows[1]["restartAt"] == .null)
        #expect(rows[1]["pid"] == .int(9))
        #expect(Set(rows[0].keys) == Set(Guard.Monitor.fieldNames))
    }

    @Test func anAlertNamesTheAppTheChildWhatHappenedAndWhatComesNextInWords() {
        let alert = Guard.MonitorAlert(appID: "org.example.App", appName: "<b>Demo</b>", user: "kid", session: "c2",
                                       restarts: 5, windowSeconds: 120, ended: "signal 9", waitingSeconds: nil)
        #expect(NotificationAgent.body(alert) == "The monitor of “&lt;b&gt;Demo&lt;/b&gt;” for kid keeps stopping: 5 times in "
            + "2 minutes, the last time it was killed; FamilyControls starts it again at once (familyctl monitors says more).")
        var required = alert
        required.consequence = .end
        #expect(FamilyCtl.describe(required).contains("it is required, so kid's sessions were ended"))
        // Neither the app ID nor the session's name nor a signal number: those are in familyctl monitors.
        for technical in ["org.example.App", "c2", "signal 9"] {
            #expect(!FamilyCtl.describe(alert).contains(technical), "\(technical)")
        }
    }

    @Test(arguments: [("signal 15", "it was killed"), ("exit status 2", "it quit"), ("stopped by signal 19", "it was paused"),
                      ("was not the approved app: its sandbox's /app is device 1 inode 2", "what ran was not the approved app"),
                      ("could not start", "it ended: could not start")])
    func howAMonitorEndedInWords(ended: String, words: String) {
        #expect(FamilyCtl.endedInWords(ended) == words)
    }
}
