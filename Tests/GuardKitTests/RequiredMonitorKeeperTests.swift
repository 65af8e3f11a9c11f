import FamilyConfiguration
import Foundation
import Glibc
@testable import GuardKit
import Synchronization
import SystemKit
import Testing
import TestSupport
@testable import GuardIdentity
@testable import GuardSessions
@testable import GuardStore

/// The sessions a fake enforcer was asked to lock or end.
private final class RecordingEnforcer: SessionEnforcing {
    let calls = Mutex<[(SessionConsequence, [String], String)]>([])
    /// When each call came.
    let times = Mutex<[ContinuousClock.Instant]>([])

    func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String) {
        calls.withLock { $0.append((consequence, sessions.map(\.name), reason)) }
        times.withLock { $0.append(.now) }
    }
}

/// The monitors' keeper in this process, with a real monitor run as a
/// throwaway user and a recording enforcer in place of the real one.
@Suite(.serialized, .enabled(if: canManageUsers, "needs root to make a user and run a monitor as them"))
struct RequiredMonitorKeeperTests {
    @Test func aRequiredMonitorKeptDownCallsTheEnforcerOnceWithTheChildsSessionsNotAtEveryKill() async throws {
        try await withThrowawayUser(prefix: "r") { user in
            let root = NSTemporaryDirectory() + "required-\(getpid())-\(Int.random(in: 0..<1_000_000))"
            let folder = root + "/org.example.App"
            try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: root) }
            chmod(root, 0o755)
            chmod(folder, 0o755)
            chmod(folder + "/bin", 0o755)
            #expect(FileManager.default.createFile(atPath: folder + "/bin/monitor", contents: Data("#!/bin/sh\nexec sleep 100000\n".utf8),
                                           attributes: [.posixPermissions: 0o755]))
            try "[Desktop Entry]\nName=App\nX-FamilyControls=true\nX-FamilyControls-Monitor=bin/monitor\nX-FamilyControls-MonitorRequired=end\n"
                .write(toFile: folder + "/org.example.App.desktop", atomically: true, encoding: .utf8)
            let record = AuthorizationRecord(user: user.name, uid: user.uid, appID: "org.example.App", member: .child,
                                             status: .approved, updatedAt: .now, appPath: folder)
            let session = MonitorSession(name: "pam-1", session: LoginSession(
                user: user.name, uid: user.uid, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                waylandDisplay: nil, bus: nil, sessionID: nil, leader: getpid(), openedAt: .now))
            let other = MonitorSession(name: "pam-2", session: LoginSession(
                user: "someone", uid: user.uid + 1, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                waylandDisplay: nil, bus: nil, sessionID: nil, leader: getpid(), openedAt: .now))
            let enforcer = RecordingEnforcer()
            let audits = Mutex<[String]>([])
            let keeper = MonitorKeeper()
            try keeper.start(MonitorKeeper.Context(
                sessions: { [session, other] }, logind: nil, approvals: { [record] }, configuration: { GuardConfiguration() },
                enforcer: enforcer, audit: { outcome, _, _, detail in audits.withLock { $0.append("\(outcome): \(detail)") } },
                socketPath: "/nonexistent", record: nil, logger: Logger(label: "test")))
            defer { keeper.stopAll() }

            func running(other: pid_t = 0) async throws -> pid_t {
                for _ in 0..<500 {
                    if let pid = keeper.list().first(where: { $0.state == .running && $0.pid != other })?.pid { return pid }
                    try await Task.sleep(for: .milliseconds(10))
                }
                throw FixtureError("no monitor running")
            }
            var pid = try await running()
            for _ in 0..<4 {
                kill(pid, SIGKILL)
                pid = try await running(other: pid)
            }
            #expect(enforcer.calls.withLock { $0.isEmpty }, "four kills are not yet kept down")
            kill(pid, SIGKILL)
            pid = try await running(other: pid)
            let calls = enforcer.calls.withLock { $0 }
            #expect(calls.count == 1)
            #expect(calls.first?.0 == .end)
            #expect(calls.first?.1 == ["pam-1"], "the child's sessions only")
            #expect(calls.first?.2.contains("the required monitor of org.example.App was kept down in session pam-1") == true)
            #expect(audits.withLock { $0.contains { $0.hasPrefix("ended: monitor of org.example.App") } })
            // Five more kills at once: not again within ten seconds of the
            // first call (a machine slow enough to take longer for them may
            // see a second call, never sooner).
            for _ in 0..<5 {
                kill(pid, SIGKILL)
                pid = try await running(other: pid)
            }
            let times = enforcer.times.withLock { $0 }
            if let first = times.first, ContinuousClock.now - first < .seconds(10) { #expect(times.count == 1, "\(times)") }
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= .seconds(10), "the sessions were ended again \(later - earlier) after the last time")
            }
        }
    }
}
