/// Where the Guard keeps its store, its journals and its records, unless
/// `--state-dir` names another folder: one place, for the daemon, the policy
/// and the Flatpak move service alike.
package enum GuardStateDirectory {
    package static let standard = "/var/lib/familycontrols"
}
