import Foundation
@testable import GuardKit
import Testing
import TestSupport
@testable import GuardIdentity

/// Which runtime is an app's own: the one its deployment's `metadata` names
/// (`[Application] runtime=`), read from the deployment's folder; a process
/// run with `flatpak run --runtime=` on another is not the app.
@Suite struct FlatpakRuntimeTests {
    static let commit = String(repeating: "cd", count: 32)

    /// An installation in a temporary folder holding the app's deployment with `metadata`.
    private func withApp(metadata: String?, _ body: (FlatpakDeployment, FlatpakInstallation) throws -> Void) throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let installation = FlatpakInstallation(path: root, kind: .system)
        let app = FlatpakDeployment(installation: installation, kind: .app, appID: "org.example.Demo", arch: "x86_64",
                                    branch: "stable", commit: Self.commit)
        try FileManager.default.createDirectory(atPath: app.filesPath, withIntermediateDirectories: true)
        if let metadata { try metadata.write(toFile: "\(app.path)/metadata", atomically: false, encoding: .utf8) }
        try body(app, installation)
    }

    private func runtime(_ id: String, branch: String = "24.08", in installation: FlatpakInstallation) -> FlatpakDeployment {
        FlatpakDeployment(installation: installation, kind: .runtime, appID: id, arch: "x86_64", branch: branch,
                          commit: Self.commit)
    }

    private static let metadata = """
        [Application]
        name=org.example.Demo
        runtime=org.example.Platform/x86_64/24.08
        sdk=org.example.Sdk/x86_64/24.08

        [Context]
        shared=network;
        """

    @Test func theRuntimeTheDeploymentNamesIsTheApps() throws {
        try withApp(metadata: Self.metadata) { app, installation in
            #expect(FlatpakSandbox.declaredRuntime(of: app) == "org.example.Platform/x86_64/24.08")
            #expect(FlatpakSandbox.runtimeProblem(runtime("org.example.Platform", in: installation), of: app) == nil)
        }
    }

    @Test func aRuntimeTheChildChoseWithFlatpakRunRuntimeIsNotTheApps() throws {
        try withApp(metadata: Self.metadata) { app, installation in
            let user = FlatpakInstallation.user(home: "/home/child", uid: 1500)
            let problem = FlatpakSandbox.runtimeProblem(runtime("org.example.ChildsRuntime", in: user), of: app)
            #expect(problem == "it runs on the runtime org.example.ChildsRuntime/x86_64/24.08, not on "
                + "org.example.Platform/x86_64/24.08, the one its deployment names")
            let otherBranch = FlatpakSandbox.runtimeProblem(runtime("org.example.Platform", branch: "23.08", in: installation),
                                                            of: app)
            #expect(otherBranch?.hasPrefix("it runs on the runtime org.example.Platform/x86_64/23.08") == true)
        }
    }

    @Test func anAppOfARootOwnedInstallationOnAPerUserCopyOfItsRuntimeIsNotItself() throws {
        try withApp(metadata: Self.metadata) { app, _ in
            // The very runtime the deployment names, but in the child's own installation.
            let user = FlatpakInstallation.user(home: "/home/child", uid: 1500)
            let problem = FlatpakSandbox.runtimeProblem(runtime("org.example.Platform", in: user), of: app)
            #expect(problem?.contains("a per-user installation its user can change") == true, "\(problem ?? "none")")
            #expect(problem?.contains("flatpak uninstall --user org.example.Platform") == true, "\(problem ?? "none")")
        }
    }

    @Test(arguments: [nil, "[Application]\nname=org.example.Demo\n", "[Context]\nruntime=org.example.Platform/x86_64/24.08\n"])
    func aDeploymentWhoseMetadataNamesNoRuntimeHasNone(_ metadata: String?) throws {
        try withApp(metadata: metadata) { app, installation in
            #expect(FlatpakSandbox.declaredRuntime(of: app) == nil)
            #expect(FlatpakSandbox.runtimeProblem(runtime("org.example.Platform", in: installation), of: app)
                == "the metadata of \(app.path) names no runtime")
        }
    }

    @Test func aMetadataLinkIsNotFollowed() throws {
        try withApp(metadata: nil) { app, installation in
            let elsewhere = "\(installation.path)/elsewhere"
            try Self.metadata.write(toFile: elsewhere, atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: "\(app.path)/metadata", withDestinationPath: elsewhere)
            #expect(FlatpakSandbox.declaredRuntime(of: app) == nil)
        }
    }
}
