import Foundation
@testable import GuardKit
import SystemKit
import TestSupport
import Testing
@testable import GuardSessions

/// logind's sessions read through the real libsystemd. This machine does
/// not run systemd as PID 1, so no live logind records sessions here:
/// `logind-probe` reads them in a mount namespace of its own whose
/// /run/systemd and /run/user are folders these tests fill as logind
/// does (`session_save` in systemd's logind-session.c: `KEY=value` lines,
/// written to a temporary file and renamed into place).
@Suite(.serialized, .enabled(if: LogindStateFixture.isAvailable,
                             "needs root, unshare(1), mount(1), /run/systemd and /run/user, and `swift build`'s logind-probe"))
struct LogindSessionsTests {
    @Test func onlyTheUsersOpenSessionsAreListedWithLogindsFields() async throws {
        try await withThrowawayUser(prefix: "ld") { child in
            try await LogindStateFixture.with { fixture in
                try fixture.writeSession("1", uid: child.uid, user: child.name, state: "active", type: "wayland",
                                         class: "user", service: "login", tty: "tty1", leader: 4242)
                try fixture.writeSession("2", uid: child.uid, user: child.name, state: "online", type: "x11",
                                         class: "user", service: "gdm-password", display: ":1", leader: 4343)
                try fixture.writeSession("3", uid: child.uid, user: child.name, state: "active", type: "x11",
                                         class: "greeter", service: "gdm-launch-environment", display: ":0", leader: 4444)
                try fixture.writeSession("4", uid: child.uid, user: child.name, state: "closing", type: "tty",
                                         class: "user", service: "sshd", leader: 4545)
                try fixture.writeSession("c5", uid: child.uid, user: child.name, state: "active", type: "unspecified",
                                         class: "background", service: "systemd-user", leader: 4646)
                // A session file without its uid (cut short, say) is left out, not a crash.
                try fixture.writeFile("sd/sessions/6", "# This is private data. Do not parse.\nSTATE=active\nCLASS=user\n")
                try fixture.writeUser(uid: child.uid, name: child.name, sessions: ["1", "2", "3", "4", "c5"])
                try fixture.makeRuntimeDirectory(uid: child.uid, sockets: ["bus", "wayland-0"])

                let probe = try await fixture.probe(["list"])
                #expect(probe.header.running, "\(probe.output)")
                let sessions = probe.sessions
                #expect(sessions.map(\.id) == ["1", "2"], "\(probe.output)")
                let leaders = probe.header.leaders
                let expected: [ProbedSession] = [
                    ProbedSession(id: "1", user: child.name, uid: child.uid, service: "login", tty: "tty1",
                                  leader: leaders ? 4242 : 0, runtime: "/run/user/\(child.uid)",
                                  bus: "unix:path=/run/user/\(child.uid)/bus", display: nil, wayland: "wayland-0"),
                    ProbedSession(id: "2", user: child.name, uid: child.uid, service: "gdm-password", tty: nil,
                                  leader: leaders ? 4343 : 0, runtime: "/run/user/\(child.uid)",
                                  bus: "unix:path=/run/user/\(child.uid)/bus", display: ":1", wayland: nil),
                ]
                #expect(sessions.map(\.fields) == expected, "\(probe.output)")
                let now = Date().timeIntervalSince1970
                for session in sessions {
                    if probe.header.startTimes {
                        #expect(session.openedAt == LogindStateFixture.realtime / 1_000_000)
                    } else {
                        #expect(abs(Double(session.openedAt) - now) < 120, "opened at \(session.openedAt), now \(now)")
                    }
                }
            }
        }
    }

    /// No runtime directory, no bus, no Wayland socket: none is claimed.
    @Test func aSessionWithoutARuntimeDirectoryHasNoBusOrWaylandDisplay() async throws {
        try await withThrowawayUser(prefix: "ld") { child in
            try await LogindStateFixture.with { fixture in
                try fixture.writeSession("7", uid: child.uid, user: child.name, state: "active", type: "wayland",
                                         class: "user", service: "login", tty: "tty2", leader: 4747)
                let probe = try await fixture.probe(["list"])
                let session = try #require(probe.sessions.first, "\(probe.output)")
                #expect(session.fields.runtime == nil && session.fields.bus == nil && session.fields.wayland == nil,
                        "\(probe.output)")
            }
        }
    }

    @Test func aSessionFileRenamedIntoPlaceMakesTheChangeDescriptorReadable() async throws {
        try await withThrowawayUser(prefix: "ld") { child in
            try await LogindStateFixture.with { fixture in
                try fixture.writeSession("1", uid: child.uid, user: child.name, state: "active", type: "tty",
                                         class: "user", service: "login", tty: "tty1", leader: 4242)
                let ready = fixture.root + "/ready"
                let watching = try fixture.startProbe(["watch", ready, "20"])
                try await LogindStateFixture.waitFor(path: ready, seconds: 20)
                try await Task.sleep(for: .milliseconds(1100))
                try fixture.writeSession("8", uid: child.uid, user: child.name, state: "online", type: "tty",
                                         class: "user", service: "sshd", tty: "pts/0", leader: 4848)
                let probe = try await watching.finish()
                let lines = probe.output.split(separator: "\n").map(String.init)
                let marker = try #require(lines.firstIndex(of: "--"), "\(probe.output)")
                #expect(lines[marker - 2] == "changed", "\(probe.output)")
                #expect(lines[marker - 1] == "acknowledged", "\(probe.output)")
                let listedBefore = lines[..<marker].count { $0.contains("\t") }
                let before = Array(probe.sessions.prefix(listedBefore))
                let after = Array(probe.sessions.dropFirst(listedBefore))
                #expect(before.map(\.id) == ["1"], "\(probe.output)")
                #expect(after.map(\.id) == ["1", "8"], "\(probe.output)")
                // Read again more than a second later, a session keeps when it opened.
                #expect(after.first?.openedAt == before.first?.openedAt, "\(probe.output)")
            }
        }
    }

    /// sd-login(3)'s check: booted with systemd (/run/systemd/system) and
    /// /run/systemd/seats present, both needed.
    @Test(arguments: [(["system", "seats"], true), (["seats"], false), (["system"], false)])
    func logindRunsOnlyWhereSystemdBootedAndSeatsExist(folders: [String], running: Bool) async throws {
        try await LogindStateFixture.with(folders: folders + ["sessions", "users"]) { fixture in
            let probe = try await fixture.probe(["list"])
            #expect(probe.header.running == running, "\(probe.output)")
            #expect(probe.status == (running ? 0 : 2), "\(probe.output)\(probe.error)")
            if !running { #expect(probe.error.contains("systemd-logind does not run on this machine"), "\(probe.error)") }
        }
    }

    @Test(.enabled(if: !LogindSessions.isRunning(), "logind runs here"))
    func noMonitorIsOpenedWhereLogindDoesNotRun() {
        #expect(LogindSessions() == nil)
        #expect(throws: LogindFailure.notRunning) { try LogindSessions.open() }
    }

    /// Where systemd-logind runs: the sessions listed are those loginctl
    /// shows of class user and state active or online.
    @Test(.enabled(if: LogindSessions.isRunning() && FileManager.default.isExecutableFile(atPath: "/usr/bin/loginctl"),
                   "needs a live systemd-logind, which needs systemd as PID 1"))
    func theLiveSessionsAreLoginctlsUserSessions() async throws {
        let sessions = try #require(LogindSessions())
        let listed = try await run("/usr/bin/loginctl", ["list-sessions", "--no-legend"]).standardOutput
        var expected: [String] = []
        for line in listed.split(separator: "\n") {
            guard let id = line.split(separator: " ").first.map(String.init) else { continue }
            let shown = try await run("/usr/bin/loginctl", ["show-session", id, "-p", "Class", "-p", "State", "--value"])
                .standardOutput.split(separator: "\n").map(String.init)
            if shown.first == "user", shown.dropFirst().first == "active" || shown.dropFirst().first == "online" {
                expected.append(id)
            }
        }
        #expect(Set(sessions.current().compactMap(\.sessionID)) == Set(expected))
    }
}
