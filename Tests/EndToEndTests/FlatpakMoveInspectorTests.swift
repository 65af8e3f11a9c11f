import Foundation
import Testing
import TestSupport

/// The move service when its inspector (which reads the child's remote and
/// keys for it) hangs: killed at its deadline, that one move fails, saying
/// so, nothing is half moved, and the child's app stays where it was, not
/// approved. Real move service under `systemd-socket-activate`, real Guard,
/// real Flatpak child; a stand-in inspector beside the service's program only.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"),
       .enabled(if: FlatpakSystemServices.isAvailable,
                "needs polkitd (/usr/lib/polkit-1/polkitd) and flatpak-system-helper (Debian's polkitd and flatpak; .ci/run installs them)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"),
                "needs systemd-socket-activate (Debian's systemd)"))
struct FlatpakMoveInspectorTests {
    @Test func aHangingInspectorInTheMoveServiceFailsThatMoveAloneAndMovesNothing() async throws {
        try await withFlatpakMoveService(serviceInspector: "exec sleep 600") { guardd, child, services in
            let commit = try child.repository.commit()
            let approval = try await guardd.flatpakRequestApproved(child)
            #expect(approval.standardOutput != "status: approved\n", "\(approval.standardOutput)\n\(approval.standardError)")
            #expect(guardd.log.contains("did not answer in time and was killed"), "\(guardd.log.suffix(3000))")

            // Nothing was half moved: the child's copy is where it was, the Guard's installation has none.
            #expect(child.activeCommit() == commit)
            #expect(services.guardActive == nil)
            let row = try await guardd.statusJSON(user: child.user.name, appID: FlatpakChild.appID)
            #expect(row?["status"] as? String != "approved", "\(String(describing: row))")
            // No inspector process is left behind, and the Guard serves on.
            let left = try await run("/usr/bin/pgrep", ["-f", "\(child.directory)/move-bin/familycontrols-inspect"])
            #expect(left.standardOutput.isEmpty, "an inspector outlived its deadline: \(left.standardOutput)")
            #expect(try await guardd.familyctl(["status"]).status == 0)
        }
    }
}
