import FamilyConfiguration
import Foundation
import Glibc
import LockEngine
@testable import GuardKit
import SystemKit
import Testing
@testable import GuardIdentity
@testable import GuardSessions
@testable import GuardStore

/// `X-FamilyControls-Monitor=`: split as `Exec=` is, and kept inside the app's folder.
@Suite struct MonitorCommandTests {
    @Test func aCommandIsSplitAsExecIs() throws {
        let plain = try MonitorCommand(parsing: "bin/monitor --flag value")
        #expect(plain == MonitorCommand(program: "bin/monitor", arguments: ["--flag", "value"]))
        let quoted = try MonitorCommand(parsing: #""bin/my monitor" "a b" "q\"uote" "\$HOME" 100%%"#)
        #expect(quoted == MonitorCommand(program: "bin/my monitor", arguments: ["a b", "q\"uote", "$HOME", "100%"]))
        #expect(try MonitorCommand(parsing: "  monitor  ").arguments.isEmpty)
    }

    @Test(arguments: [
        ("", MonitorCommandError.empty),
        ("   ", .empty),
        ("/usr/bin/evil", .absoluteProgram("/usr/bin/evil")),
        ("../../bin/sh", .outsideTheApp("../../bin/sh")),
        ("bin/../../x", .outsideTheApp("bin/../../x")),
        ("bin//monitor", .outsideTheApp("bin//monitor")),
        ("./monitor", .outsideTheApp("./monitor")),
        ("monitor %f", .fieldCode),
        ("monitor %", .fieldCode),
        (#""bin/monitor"#, .unclosedQuote),
        (#""a\n""#, .badEscape),
        ("monitor\u{1}x", .controlCharacter),
        (String(repeating: "a ", count: 65), .tooLong),
        (String(repeating: "a", count: 4097), .tooLong),
    ])
    func aHostileCommandIsRefusedSayingWhy(_ value: String, _ expected: MonitorCommandError) {
        #expect(throws: expected) { try MonitorCommand(parsing: value) }
        #expect(!expected.description.isEmpty)
    }

    @Test func theDesktopEntryKeepsTheFirstMonitor() throws {
        let entry = try inspectedEntry("""
            [Desktop Entry]
            X-FamilyControls-Monitor=bin/first
            X-FamilyControls-Monitor=bin/second
            [Desktop Action other]
            X-FamilyControls-Monitor=bin/action

            """)
        #expect(entry.monitor == "bin/first")
    }

    @Test func aSessionLogindKnowsIsCountedOnce() {
        func session(_ leader: pid_t, id: String?) -> LoginSession {
            LoginSession(user: "kid", uid: 1000, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                         waylandDisplay: nil, bus: nil, sessionID: id, leader: leader, openedAt: .now)
        }
        let merged = MonitorSessions.merge(logind: [session(10, id: "3")], pam: [session(10, id: "3"), session(20, id: nil),
                                                                              session(30, id: "9")])
        #expect(merged.map(\.name) == ["3", "pam-20", "pam-30"])
    }

    /// A session logind has but runs no monitor in (a `background` one,
    /// opened by a service or cron) gets none through the PAM module either.
    @Test func aSessionLogindLeavesOutIsNotMonitoredThroughThePAMModule() {
        func session(_ leader: pid_t, id: String?) -> LoginSession {
            LoginSession(user: "kid", uid: 1000, service: "cron", tty: nil, runtimeDirectory: nil, display: nil,
                         waylandDisplay: nil, bus: nil, sessionID: id, leader: leader, openedAt: .now)
        }
        let merged = MonitorSessions.merge(logind: [session(10, id: "3")], known: ["3", "7"],
                                           pam: [session(40, id: "7"), session(20, id: nil)])
        #expect(merged.map(\.name) == ["3", "pam-20"])
    }
}

/// The program a monitor command names, found inside the app's folder only.
@Suite struct MonitorLaunchTests {
    private func app(_ body: (String) throws -> Void) throws {
        let folder = NSTemporaryDirectory() + "monitor-launch-\(getpid())-\(Int.random(in: 0..<1_000_000))/org.example.App"
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent) }
        try body(folder)
    }

    private func record(_ folder: String) -> AuthorizationRecord {
        AuthorizationRecord(user: "kid", uid: 1000, appID: "org.example.App", member: .child, status: .approved,
                            updatedAt: .now, appPath: folder)
    }

    private func declare(_ folder: String, _ value: String, extra: String = "") throws {
        try "[Desktop Entry]\nName=App\nExec=app\nX-FamilyControls=true\nX-FamilyControls-Monitor=\(value)\n\(extra)"
            .write(toFile: folder + "/org.example.App.desktop", atomically: true, encoding: .utf8)
    }

    @Test func theProgramInsideTheFolderIsRunWithItsArguments() throws {
        try app { folder in
            #expect(FileManager.default.createFile(atPath: folder + "/bin/monitor", contents: Data("#!/bin/sh\n".utf8),
                                           attributes: [.posixPermissions: 0o755]))
            try declare(folder, "bin/monitor --quiet")
            let launch = try #require(try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration()))
            #expect(launch.path.hasSuffix("/org.example.App/bin/monitor"))
            #expect(launch.arguments == [launch.path, "--quiet"])
            #expect(launch.appName == "App")
            #expect(!launch.isFlatpak)
            #expect(launch.required == nil)
            #expect(launch.program == "bin/monitor")
        }
    }

    @Test(arguments: [("lock", SessionConsequence.lock), ("end", .end), ("yes", nil), ("", nil)])
    func aRequiredMonitorIsReadAndAnUnknownValueIsIgnoredWhenRun(value: String, expected: SessionConsequence?) throws {
        try app { folder in
            #expect(FileManager.default.createFile(atPath: folder + "/bin/monitor", contents: Data("#!/bin/sh\n".utf8),
                                           attributes: [.posixPermissions: 0o755]))
            try declare(folder, "bin/monitor", extra: "X-FamilyControls-MonitorRequired=\(value)\n")
            let launch = try #require(try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration()))
            #expect(launch.required == expected)
        }
    }

    @Test func aLinkAMissingOrNonExecutableProgramIsRefused() throws {
        try app { folder in
            try FileManager.default.createSymbolicLink(atPath: folder + "/bin/out", withDestinationPath: "/bin/sh")
            try declare(folder, "bin/out")
            #expect(throws: MonitorLaunchError.missingProgram("bin/out")) {
                try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration())
            }
            try declare(folder, "bin/none")
            #expect(throws: MonitorLaunchError.missingProgram("bin/none")) {
                try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration())
            }
            #expect(FileManager.default.createFile(atPath: folder + "/bin/plain", contents: Data(), attributes: [.posixPermissions: 0o644]))
            try declare(folder, "bin/plain")
            #expect(throws: MonitorLaunchError.notExecutable("bin/plain")) {
                try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration())
            }
            try "[Desktop Entry]\nX-FamilyControls=true\n".write(toFile: folder + "/org.example.App.desktop", atomically: true, encoding: .utf8)
            #expect(try MonitorLaunch.of(record(folder), folder: OpenedDirectory.open(folder), configuration: GuardConfiguration()) == nil)
        }
    }
}

/// `X-FamilyControls-MonitorRequired=`: lock or end, refused otherwise when an app asks.
@Suite struct MonitorRequirementTests {
    @Test func lockAndEndAreReadAndAnythingElseIsRefusedByName() throws {
        #expect(try MonitorRequirement.parse("lock") == .lock)
        #expect(try MonitorRequirement.parse("end") == .end)
        for value in ["Lock", "yes", "", "end ", "lock;end"] {
            #expect(throws: MonitorRequirementError.unknown(value)) { try MonitorRequirement.parse(value) }
        }
        let without = try inspectedEntry("[Desktop Entry]\nX-FamilyControls-MonitorRequired=end\n")
        #expect(throws: MonitorRequirementError.noMonitor) { try MonitorRequirement.declared(in: without) }
        let with = try inspectedEntry("[Desktop Entry]\nX-FamilyControls-Monitor=bin/m\nX-FamilyControls-MonitorRequired=end\n")
        #expect(try MonitorRequirement.declared(in: with) == .end)
        #expect(try MonitorRequirement.declared(in: try inspectedEntry("[Desktop Entry]\n")) == nil)
    }
}
