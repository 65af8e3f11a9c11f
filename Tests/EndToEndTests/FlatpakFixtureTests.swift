import Foundation
import Testing
import TestSupport

/// The real Flatpak, offline: a child installs the test app from a local
/// repository for their own account, runs it in its sandbox, and updates it;
/// root identifies the sandboxed process from what the kernel and Flatpak
/// give it. What the Flatpak tests of the Guard stand on.
@Suite(.serialized, .enabled(if: canRunFlatpak, "needs root, useradd, and Debian's flatpak and dbus (.ci/run installs them)"))
struct FlatpakFixtureTests {
    let appID = FlatpakChild.appID

    @Test func rootIdentifiesTheChildsSandboxedAppFromItsFlatpakInfo() async throws {
        try await withFlatpakChild { child in
            let commit = try child.repository.commit()
            #expect(child.activeCommit() == commit)
            let files = "\(child.deployment(commit))/files"
            let app = try await child.start()
            defer { app.stop() }

            let info = try app.flatpakInfo()
            #expect(info["Application"]?["name"] == appID)
            #expect(info["Instance"]?["app-commit"] == commit)
            #expect(info["Instance"]?["instance-id"] == app.instance)
            #expect(info["Context"]?["filesystems"]?.contains("/run/familycontrols:ro") == true)
            // app-path names the deployment: the same folder, not merely the same string.
            let appPath = try #require(info["Instance"]?["app-path"])
            #expect(fileIdentity(appPath)! == fileIdentity(files)!)
            #expect(fileIdentity("/proc/\(app.pid)/root/app")! == fileIdentity(files)!)
            // The sandboxed process is the child's, in a user namespace of its own.
            let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(app.pid)")[.ownerAccountID] as? Int
            #expect(owner == Int(child.user.uid))
            let namespace = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(app.pid)/ns/user")
            #expect(namespace != (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/user")))
            #expect(app.output.contains("\(appID) version 1"))
        }
    }

    @Test func theChildsUpdateMovesTheAppToTheNewCommit() async throws {
        try await withFlatpakChild { child in
            let first = try child.repository.commit()
            let second = try await offload { try child.repository.publish(version: 2) }
            #expect(second != first)

            try await child.update().requireSuccess()
            #expect(child.activeCommit() == second)
            let app = try await child.start()
            defer { app.stop() }
            let info = try app.flatpakInfo()
            #expect(info["Instance"]?["app-commit"] == second)
            #expect(fileIdentity("/proc/\(app.pid)/root/app")! == fileIdentity("\(child.deployment(second))/files")!)
            #expect(app.output.contains("\(appID) version 2"))
        }
    }

    @Test func theChildUninstallsTheirOwnAppWithNoAuthorization() async throws {
        try await withFlatpakChild { child in
            try await child.uninstall().requireSuccess()
            #expect(child.activeCommit() == nil)
            #expect(try await child.flatpak(["info", "--user", appID]).status != 0)
        }
    }
}
