@testable import GuardKit
import Testing
@testable import GuardIdentity
@testable import GuardPolicy

/// What `GetStatus`, `Subscribe` and a request answer for an app in the
/// Guard's Flatpak installation, whose `app/ID` folder is the same at every
/// commit: approved only at the approved deployment.
@Suite struct ApprovedDeploymentTests {
    let guardInstallation = FlatpakInstallation(path: "/var/lib/familycontrols-flatpak", kind: .system)

    private func deployment(_ commit: String, in installation: FlatpakInstallation? = nil) -> FlatpakDeployment {
        FlatpakDeployment(installation: installation ?? guardInstallation, kind: .app, appID: "org.example.App",
                          arch: "x86_64", branch: "stable", commit: commit)
    }

    @Test func onlyTheApprovedCommitOfTheApprovedInstallationIsApproved() {
        let approved = deployment(String(repeating: "a", count: 64))
        #expect(AuthorizationLedger.isApprovedDeployment(approved, running: approved))
        #expect(!AuthorizationLedger.isApprovedDeployment(approved, running: deployment(String(repeating: "b", count: 64))))
        #expect(!AuthorizationLedger.isApprovedDeployment(approved, running: deployment(approved.commit, in: .system)))
        #expect(!AuthorizationLedger.isApprovedDeployment(approved, running: nil), "not a Flatpak process at all")
        // An approval that names no deployment (an app root, an in-place lock) is the folder's alone.
        #expect(AuthorizationLedger.isApprovedDeployment(nil, running: deployment(String(repeating: "b", count: 64))))
    }
}
