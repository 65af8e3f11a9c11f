import FamilyControlsModel
import SystemKit
#if canImport(Glibc)
import Glibc
#endif
import LockEngine
import UpdateSignature
import GuardIdentity

/// One app's authorization for one user, as the store records it.
package struct AuthorizationRecord: Hashable, Sendable {
    /// The user the app runs as: the child, or the individual.
    package var user: String
    /// That user's uid when the record was written, so an account deleted and
    /// re-created under the same name can be told apart.
    package var uid: UInt32
    /// The app's identifier, from its manifest.
    package var appID: String
    /// Whether a guardian authorized the app for a child, or a person for themself.
    package var member: FamilyControlsMember
    /// The authorization's state; a revoked one is `.notDetermined`.
    package var status: AuthorizationStatus
    /// Who approved: the guardian, the individual, or "root" for an administrator.
    package var approvedBy: String?
    /// The app directory the authorization covers.
    package var appPath: String
    /// The app's name as its alert showed it (``AppIdentity/displayName``);
    /// nil when not known (set by an administrator by app ID, or recorded
    /// before the Guard kept it).
    package var displayName: String?
    /// Which directory that is (device and inode, as identified); an
    /// approval answers that directory's program only. Nil in records made
    /// before the Guard kept it.
    package var appIdentity: FileIdentity?
    /// For a Flatpak app, the deployment approved (``appPath`` is then the
    /// folder ``FlatpakLockPlacement`` names); nil for an app in an app root.
    package var flatpak: FlatpakDeployment?
    /// For a Flatpak app moved into the Guard's installation, where it
    /// updates from and the approved commit's time; nil otherwise.
    package var flatpakOrigin: FlatpakOrigin?
    /// For a child's app in an app root, the update key this approval
    /// trusts: the one a parent or guardian was shown when approving it (or
    /// a later update of it). A staged version it signs, newer than
    /// ``highestVersion``, is swapped in without asking; nil when no key
    /// was shown (then every update is a guardian's decision).
    package var updateKey: UpdateKey?
    /// The highest `X-FamilyControls-Version=` this approval has had (a
    /// comparable ``UpdateVersion``); nil when none is known.
    package var highestVersion: String?
    /// When the record last changed: the exact value stored, so a record
    /// read back equals the one saved.
    package var updatedAt: UnixTime

    /// When the record last changed, in Unix seconds.
    var updatedAtSeconds: Double {
        get { updatedAt.seconds }
        set { updatedAt.seconds = newValue }
    }

    package init(
        user: String, uid: UInt32, appID: String, member: FamilyControlsMember,
        status: AuthorizationStatus, approvedBy: String? = nil, updatedAt: UnixTime, appPath: String,
        appIdentity: FileIdentity? = nil, flatpak: FlatpakDeployment? = nil, displayName: String? = nil
    ) {
        self.flatpak = flatpak
        self.displayName = displayName
        self.user = user
        self.uid = uid
        self.appID = appID
        self.member = member
        self.status = status
        self.approvedBy = approvedBy
        self.appPath = appPath
        self.appIdentity = appIdentity
        self.updatedAt = updatedAt
    }
}
