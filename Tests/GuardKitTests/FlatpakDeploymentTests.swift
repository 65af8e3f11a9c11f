@testable import GuardKit
import Testing
@testable import GuardIdentity

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
        #expect(refusal(info(appPath: path)) == .notInInstallation(path: path))
    }

    @Test func aForgedIDBranchArchOrCommitForAnotherAppsDeploymentIsRefused() {
        let other = "/home/child/.local/share/flatpak/app/org.example.Other/x86_64/stable/\(Self.commit)/files"
        #expect(refusal(info(appPath: other)) == .deploymentMismatch(path: other, "it is not a deployment of org.example.Demo"))
        let path = "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/\(Self.commit)/files"
        #expect(refusal(info(appPath: path, branch: "beta")) == .deploymentMismatch(path: path, "it is not of branch beta"))
        #expect(refusal(info(appPath: path, arch: "aarch64")) == .deploymentMismatch(path: path, "it is not for aarch64"))
        let newer = String(repeating: "cd", count: 32)
        #expect(refusal(info(appPath: path, commit: newer)) == .deploymentMismatch(path: path, "it is not commit \(newer)"))
        // `active` is Flatpak's link to the current commit: app-path never goes through it.
        let active = "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/stable/active/files"
        #expect(refusal(info(appPath: active)) == .deploymentMismatch(path: active, "it is not commit \(Self.commit)"))
    }

    private func withRuntime(path: String?, ref: String? = "runtime/org.example.Platform/x86_64/1",
                             commit: String? = String(repeating: "cd", count: 32)) -> FlatpakInfo {
        var info = info(appPath: "/var/lib/flatpak/app/org.example.Demo/x86_64/stable/\(Self.commit)/files")
        info.runtime = ref
        info.runtimePath = path
        info.runtimeCommit = commit
        return info
    }

    @Test func theRuntimeIsTheDeploymentOfTheRuntimeRefAtItsCommit() throws {
        let runtimeCommit = String(repeating: "cd", count: 32)
        let path = "/home/child/.local/share/flatpak/runtime/org.example.Platform/x86_64/1/\(runtimeCommit)/files"
        let runtime = try FlatpakDeployment.runtime(namedBy: withRuntime(path: path), in: Self.installations)
        #expect(runtime == FlatpakDeployment(installation: Self.user, kind: .runtime, appID: "org.example.Platform",
                                             arch: "x86_64", branch: "1", commit: runtimeCommit))
        #expect(runtime.filesPath == path)
    }

    @Test func aForgedRuntimePathIsRefused() {
        func refusal(_ info: FlatpakInfo) -> FlatpakIdentityError? {
            do { _ = try FlatpakDeployment.runtime(namedBy: info, in: Self.installations); return nil } catch { return error }
        }
        let runtimeCommit = String(repeating: "cd", count: 32)
        // The child's own /usr, or an app's deployment passed off as a runtime.
        let mine = "/home/child/usr/runtime/org.example.Platform/x86_64/1/\(runtimeCommit)/files"
        #expect(refusal(withRuntime(path: mine)) == .notInInstallation(path: mine))
        let app = "/home/child/.local/share/flatpak/app/org.example.Platform/x86_64/1/\(runtimeCommit)/files"
        #expect(refusal(withRuntime(path: app)) == .notInInstallation(path: app))
        let other = "/var/lib/flatpak/runtime/org.example.Other/x86_64/1/\(runtimeCommit)/files"
        #expect(refusal(withRuntime(path: other)) == .deploymentMismatch(path: other, "it is not a deployment of org.example.Platform"))
        let genuine = "/var/lib/flatpak/runtime/org.example.Platform/x86_64/1/\(runtimeCommit)/files"
        #expect(refusal(withRuntime(path: genuine, commit: Self.commit)) == .deploymentMismatch(path: genuine, "it is not commit \(Self.commit)"))
        #expect(refusal(withRuntime(path: genuine, commit: nil))
                == .deploymentMismatch(path: genuine, ".flatpak-info names no runtime and runtime commit"))
        #expect(refusal(withRuntime(path: genuine, ref: nil))
                == .deploymentMismatch(path: genuine, ".flatpak-info names no runtime and runtime commit"))
        #expect(refusal(withRuntime(path: nil)) == .notInInstallation(path: ""))
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
        #expect(FlatpakDeployment.pathInsideRuntime("/usr/lib/x86_64-linux-gnu/libc.so.6") == "lib/x86_64-linux-gnu/libc.so.6")
        #expect(FlatpakDeployment.pathInsideRuntime("/app/lib/libc.so.6") == nil)
        #expect(FlatpakDeployment.pathInsideRuntime("/usr/../app/bin/demo") == nil)
    }

    @Test func theUserInstallationIsUnderTheHomeOfThatUser() {
        #expect(FlatpakInstallation.user(home: "/home/child/", uid: 1500)
                == FlatpakInstallation(path: "/home/child/.local/share/flatpak", kind: .user(uid: 1500)))
        #expect(FlatpakInstallation.system.owner == 0)
        #expect(Self.user.owner == 1500)
    }
}
