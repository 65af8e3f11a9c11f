import Foundation
import GuardIdentity
@testable import GuardSessions
import GuardStore
import GuardTime
import SystemKit
import TestSupport
import TimeLimits

/// Limits the test sets and changes, as the policy will.
final class TestLimitsSource: TimeLimitsSource, @unchecked Sendable {
    let children: LockedBox<[ChildTimeLimits]>
    init(_ children: [ChildTimeLimits]) { self.children = LockedBox(children) }
    func childrenWithLimits() -> [ChildTimeLimits] { children.get() }
}

/// What was asked of an enforcer, for the tests that need no real session.
final class RecordingEnforcer: SessionEnforcing, @unchecked Sendable {
    let asked = LockedBox<[(SessionConsequence, [String], Date)]>([])
    func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String) {
        asked.update { $0.append((consequence, sessions.map(\.name), Date())) }
    }
}

/// What was told to a child, for the tests that need no terminal.
final class RecordingMessenger: SessionMessenger, @unchecked Sendable {
    let told = LockedBox<[String]>([])
    func tell(_ message: String, in sessions: [MonitorSession]) -> [String] {
        told.update { $0.append(message) }
        return ["test"]
    }
}

/// The audit rows the keeper appended: outcome, user, detail.
final class AuditRecorder: @unchecked Sendable {
    let rows = LockedBox<[(String, String, String)]>([])
    var append: @Sendable (_ outcome: AuditOutcome, _ user: String, _ detail: String) -> Void {
        { [rows] outcome, user, detail in rows.update { $0.append((outcome.rawValue, user, detail)) } }
    }
    func outcomes() -> [String] { rows.get().map(\.0) }
}

/// Short bounds, so a test's allowance is seconds.
func quickLimits(warnings: [Int] = [4, 2]) -> GuardLimits {
    var limits = GuardLimits()
    limits.timeWarnings = warnings.map { .seconds($0) }
    limits.timeEnforcedAgainAfter = .seconds(2)
    limits.timeLookInterval = .milliseconds(250)
    limits.timeRecordInterval = .seconds(2)
    limits.sessionEndGrace = .seconds(1)
    return limits
}

/// A session of `uid` logind does not hold, as the PAM module's would be.
func fakeSession(uid: UInt32, user: String = "alice", leader: pid_t, tty: String? = nil) -> MonitorSession {
    MonitorSession(name: "pam-\(leader)",
                   session: LoginSession(user: user, uid: uid, service: "login", tty: tty, leader: leader, openedAt: .now))
}

func childLimits(uid: UInt32, user: String = "alice", daily: Int?, hours: String? = nil, atEnd: TimeUpAction = .lock,
                 extra: Int = 0) throws -> ChildTimeLimits {
    ChildTimeLimits(uid: uid, user: user,
                    limits: TimeLimits(hours: try hours.map { try LoginHours(parsing: $0) },
                                       daily: daily.map { SessionDuration(seconds: $0) }, atEnd: atEnd),
                    appNames: ["FamilyControls Demo"], day: LocalMoment(.now).day, extraSeconds: extra)
}

/// The `child` line of `uid` in the login-limits file at `path`, split in fields.
func limitsLine(of uid: UInt32, at path: String) -> [String]? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    return text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.first { $0.count > 2 && $0[0] == "child" && $0[1] == String(uid) }
}

func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date() + seconds
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

let quietLogger = Logger(label: "time-test", minimumLevel: .error)

/// The Guard's program in `directory`, where a child may run it (as
/// `/usr/sbin` is), and an empty `desktop` folder there: the helper's path
/// and the folder's.
func childDesktop(in directory: String) throws -> (helper: String, desktop: String) {
    chmod(directory, 0o755)
    let helper = "\(directory)/familycontrolsd"
    try copyProgram(productPath("familycontrolsd"), to: helper)
    chmod(helper, 0o755)
    let desktop = "\(directory)/desktop"
    try FileManager.default.createDirectory(atPath: desktop, withIntermediateDirectories: false)
    return (helper, desktop)
}
