/// Where the lock of an approved Flatpak app goes: the one place that
/// decides it, so a different placement (moving the app into a root-owned
/// installation) replaces this and nothing else.
///
/// In a per-user installation the lock is in place: `app/ID` and everything
/// in it immutable, the row of ARCHITECTURE.md's table ("Flatpak apps: the
/// lock's design") where `flatpak uninstall --user` fails with nothing
/// changed and the app stays runnable (the immutable `ARCH/BRANCH` folder
/// keeps its `active` link). A system installation, or another of root's,
/// needs no lock: the child cannot change it at all, so its files are left
/// untouched.
package enum FlatpakLockPlacement {
    /// The folder an approval of `deployment` locks, and that identifies
    /// the app (an approval answers that folder only): `INSTALLATION/app/ID`.
    package static func folder(of deployment: FlatpakDeployment) -> String {
        deployment.installation.path + "/app/" + deployment.appID
    }

    /// Whether an approval of `deployment` needs a lock at all.
    package static func needsLock(_ deployment: FlatpakDeployment) -> Bool {
        deployment.installation.kind != .system
    }

    /// What `familyctl status` says in place of a lock that is not needed.
    package static let notNeeded = "not needed: a root-owned Flatpak installation"
}
