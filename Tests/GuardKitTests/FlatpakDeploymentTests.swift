@testable import GuardKit
import Testing

@Suite struct FlatpakDeploymentTests {
    static let commit = String(repeating: "ab", count: 32)
    static let user = FlatpakInstallation.user(home: "/home/child", uid: 1500)
    static let installations = [user, FlatpakInstallation.system]

    private func info(appID: String = "org.example.Demo", appPath: String, branch: String = "stable",
                      arch: String = "x86_64", commit: String = commit) -> FlatpakInfo {
        FlatpakInfo(appID: appID, appPath: appPath, appCommit: commit, instanceID: "1", branch: branch, arch: arch)
    }

    private func refusal(_ info: FlatpakInfo) -> FlatpakIdentityError? {
        do { _ = try FlatpakDeployment.named(by: info, in: Self.installations); return nil } catch { return error }
    }

    @Test func aGenuineAppPathNamesTheDeploymentInItsInstallation() throws {
        let path = "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(Self.commit)/files"
        let deployment = try FlatpakDeployment.named(by: info(appPath: path), in: Self.installations)
        #expect(deployment == FlatpakDeployment(installation: Self.user, appID: "org.example.Demo", arch: "x86_64",
                                                branch: "stable", commit: Self.commit))
        #expect(deployment.filesPath == path)

        let system = "/var/lib/flatpak/app/org.example.Demo/x86_64/stable/\(Self.commit)/files"
        #expect(try FlatpakDeployment.named(by: info(appPath: system), in: Self.installations).installation == .system)
    }

    /// A child's own bubblewrap sandbox, its `.flatpak-info` naming the
    /// approved app but a deployment the child laid out elsewhere.
    @Test(arguments: [
        "/home/child/fake/app/org.example.Demo/x86_64/stable/\(commit)/files",
        "/home/child/.local/share/flatpak-fake/app/org.example.Demo/x86_64/stable/\(commit)/files",
        "/home/other/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(commit)/files",
        "/tmp/app/org.example.Demo/x86_64/stable/\(commit)/files",
        "/home/child/.local/share/flatpak/runtime/org.example.Demo/x86_64/stable/\(commit)/files",
        "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(commit)/files/bin",
        "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(commit)",
        "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(commit)/../../../../org.example.Demo/x86_64/stable/\(commit)/files",
    ])
    func aForgedAppPathOutsideARecognisedInstallationIsRefused(path: String) {
        #expect(refusal(info(appPath: path)) == .notInInstallation(appPath: path))
    }

    @Test func aForgedIDBranchArchOrCommitForAnotherAppsDeploymentIsRefused() {
        let other = "/home/child/.local/share/flatpak/app/org.example.Other/x86_64/stable/\(Self.commit)/files"
        #expect(refusal(info(appPath: other)) == .deploymentMismatch(appPath: other, "it is not a deployment of org.example.Demo"))
        let path = "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(Self.commit)/files"
        #expect(refusal(info(appPath: path, branch: "beta")) == .deploymentMismatch(appPath: path, "it is not of branch beta"))
        #expect(refusal(info(appPath: path, arch: "aarch64")) == .deploymentMismatch(appPath: path, "it is not for aarch64"))
        let newer = String(repeating: "cd", count: 32)
        #expect(refusal(info(appPath: path, commit: newer)) == .deploymentMismatch(appPath: path, "it is not commit \(newer)"))
        // `active` is Flatpak's link to the current commit: app-path never goes through it.
        let active = "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/active/files"
        #expect(refusal(info(appPath: active)) == .deploymentMismatch(appPath: active, "it is not commit \(Self.commit)"))
    }

    @Test func onlyTheFilesOfANormalizedPathUnderAppAreInsideTheApp() {
        #expect(FlatpakDeployment.pathInsideApp("/app/bin/demo") == "bin/demo")
        #expect(FlatpakDeployment.pathInsideApp("/app/lib/libdemo.so.1") == "lib/libdemo.so.1")
        #expect(FlatpakDeployment.pathInsideApp("/usr/bin/demo") == nil)
        #expect(FlatpakDeployment.pathInsideApp("/apps/bin/demo") == nil)
        #expect(FlatpakDeployment.pathInsideApp("/app/../usr/bin/demo") == nil)
        #expect(FlatpakDeployment.pathInsideApp("/app//bin/demo") == nil)
        #expect(FlatpakDeployment.pathInsideApp("/app/bin/demo (deleted)") == "bin/demo (deleted)")
        #expect(FlatpakDeployment.pathInsideApp("/app") == nil)
    }

    @Test func theUserInstallationIsUnderTheHomeOfThatUser() {
        #expect(FlatpakInstallation.user(home: "/home/child/", uid: 1500)
                == FlatpakInstallation(path: "/home/child/.local/share/flatpak", kind: .user(uid: 1500)))
        #expect(FlatpakInstallation.system.owner == 0)
        #expect(Self.user.owner == 1500)
    }
}
