import Foundation
import Testing
import TestSupport

/// "Settings": familyctl against a real Guard, and a running app that sees the change.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct SettingsTests {
    @Test func statusJSONShowsTheApprovalAndRevokeReachesAWatchingApp() async throws {
        try await withGuard { guardd in
            // The watching app requests (and gets approval), then prints every change.
            let command = guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                             ["watch", "--member", "child", "--stdin"])
            let watcher = Process()
            watcher.executableURL = URL(fileURLWithPath: command[0])
            watcher.arguments = Array(command.dropFirst())
            let input = Pipe(), output = Pipe()
            watcher.standardInput = input
            watcher.standardOutput = output
            watcher.standardError = Pipe()
            try watcher.run()
            defer { kill(watcher) }
            input.fileHandleForWriting.write(Data("continue\n".utf8))
            let id = try await guardd.waitForPendingRequest()
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            let lines = LineCollector(output.fileHandleForReading)
            try lines.waitFor("status: approved", timeout: 20)

            let json = try await guardd.familyctl(["status", "--json"])
            #expect(json.status == 0)
            let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
            let rows = object?["authorizations"] as? [[String: Any]] ?? []
            let row = try #require(rows.first { $0["user"] as? String == guardd.child.name })
            #expect(row["app"] as? String == GuardFixture.appID)
            #expect(row["status"] as? String == "approved")
            #expect(row["member"] as? String == "child")
            #expect(row["approvedBy"] as? String == guardd.guardian.name)
            #expect(row["lock"] as? String == "locked")
            #expect((row["updatedAt"] as? String)?.hasSuffix("Z") == true)
            #expect(row["name"] as? String == "FamilyControls Demo", "the app's name as its alert showed it")
            #expect(Set(row.keys) == ["user", "app", "name", "member", "status", "approvedBy", "updatedAt", "lock", "lockReason",
                                      "path", "flatpak"])
            #expect(row["lockReason"] is NSNull, "a lock that holds has no reason")
            // An app root's app is no Flatpak app: null, as approvedBy is when no one approved.
            #expect(row["flatpak"] is NSNull)

            let revoked = try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID])
            #expect(revoked.status == 0, "\(revoked.standardError)")
            // From the moment the Guard has recorded the revoke to the app printing it.
            let recorded = Date()
            try lines.waitFor("status: notDetermined", timeout: 5)
            #expect(Date().timeIntervalSince(recorded) < 1.0)

            // An administrator's approval reaches the running app as well.
            let set = try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"])
            #expect(set.status == 0)
            try lines.waitFor("status: approved", timeout: 2, occurrence: 2)

            // A graduation too.
            let graduated = try await guardd.familyctl(["graduate", guardd.child.name])
            #expect(graduated.status == 0)
            #expect(graduated.standardOutput.contains("revoked \(GuardFixture.appID)"))
            try lines.waitFor("status: notDetermined", timeout: 2, occurrence: 2)
        }
    }

    @Test func tableListsEveryAuthorization() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            // --socket before the verb this time (familyctl() puts it after).
            let table = try await run(productPath("familyctl"), ["--socket", guardd.socket, "status"])
            #expect(table.status == 0)
            let lines = table.standardOutput.split(separator: "\n")
            #expect(lines.first?.hasPrefix("USER") == true)
            #expect(lines.contains { $0.contains(guardd.child.name) && $0.contains("approved") && $0.contains("locked") })
        }
    }

    @Test func changesNeedRootOrTheChildsGuardianWhoSeesOnlyTheirChildren() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let stranger = try await guardd.familyctlAsGuardian(
                ["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID], as: guardd.adult)
            #expect(stranger.status == 4)
            #expect(stranger.standardError == "familyctl: only root or a guardian of \(guardd.child.name) may revoke "
                + "\(guardd.child.name)'s authorizations\n")
            let strangersView = try await guardd.familyctlAsGuardian(["status"], as: guardd.adult)
            #expect(!strangersView.standardOutput.contains(guardd.child.name), "someone else's child is not theirs to see")
            let graduate = try await guardd.familyctlAsGuardian(["graduate", guardd.child.name])
            #expect(graduate.status == 4, "graduating stays root's")

            // The child's own guardian, without root, authenticating as themself.
            let view = try await guardd.familyctlAsGuardian(["status"])
            #expect(view.standardOutput.contains(guardd.child.name) && view.standardOutput.contains("locked"))
            let password = "\(guardd.guardian.password ?? "")\n"
            try await guardd.familyctlAsGuardian(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID, "--stdin"],
                                                 input: password).requireSuccess()
            #expect(try await guardd.storedStatus() == "notDetermined")
            try await guardd.familyctlAsGuardian(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved",
                                                  "--stdin"], input: password).requireSuccess()
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
        }
    }

    @Test func aGuardianHasNoSayOverAnAdult() async throws {
        try await withGuard { guardd in
            // Guardians= is the family's; the adult is not among Children=.
            let adult = guardd.adult.name
            let set = try await guardd.familyctlAsGuardian(["set", "--user", adult, "--app", GuardFixture.appID, "approved"])
            #expect(set.status == 4, "\(set.standardError)")
            #expect(try await guardd.authorization(user: adult) == nil)
            try await guardd.familyctl(["set", "--user", adult, "--app", GuardFixture.appID, "denied"]).requireSuccess()
            let revoke = try await guardd.familyctlAsGuardian(["revoke", "--user", adult, "--app", GuardFixture.appID])
            #expect(revoke.status == 4, "\(revoke.standardError)")
            #expect(try await guardd.storedStatus(user: adult) == "denied")
            let view = try await guardd.familyctlAsGuardian(["status"])
            #expect(!view.standardOutput.contains(adult), "\(view.standardOutput)")
            let asked = try await guardd.familyctlAsGuardian(["status", "--user", adult])
            #expect(asked.status == 4, "\(asked.standardError)")
            #expect(asked.standardError.contains("only root or a guardian of \(adult) may see"))
        }
    }

    @Test func setDeniedAndUnknownUserErrors() async throws {
        try await withGuard { guardd in
            let denied = try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "denied"])
            #expect(denied.status == 0)
            #expect(try await guardd.storedStatus() == "denied")
            let unknown = try await guardd.familyctl(["set", "--user", "fcnosuchuser", "--app", GuardFixture.appID, "approved"])
            #expect(unknown.status == 1)
            #expect(unknown.standardError == "familyctl: no such user fcnosuchuser\n")
            let noApp = try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", "org.example.Missing", "approved"])
            #expect(noApp.status == 1)
            #expect(noApp.standardError.contains("no app directory org.example.Missing"))
        }
    }

    @Test func unreachableGuardIsReportedWithExitFive() async throws {
        try await withTemporaryDirectory { directory in
            let result = try await run(productPath("familyctl"), ["status", "--socket", "\(directory)/none.socket"])
            #expect(result.status == 5)
            #expect(result.standardError.hasPrefix("familyctl: cannot reach the Guard:"))
        }
    }
}

/// Collects a process's output lines as they come.
final class LineCollector: @unchecked Sendable {
    private let lines = LockedBox<[String]>([])

    init(_ handle: FileHandle) {
        let buffer = LockedBox(Data())
        handle.readabilityHandler = { [lines] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            buffer.update { pending in
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.update { $0.append(line) }
                }
            }
        }
    }

    /// Every complete line so far.
    var all: [String] { lines.get() }

    /// Waits until `line` has appeared `occurrence` times.
    func waitFor(_ line: String, timeout: TimeInterval, occurrence: Int = 1) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if lines.get().filter({ $0 == line }).count >= occurrence { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw FixtureError("\"\(line)\" (×\(occurrence)) did not appear within \(timeout) s; saw \(lines.get())")
    }
}
