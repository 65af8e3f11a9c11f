import FamilyConfiguration
import SystemKit

/// The Flatpak installations whose apps the Guard recognises for one user,
/// from `[Flatpak]` of `familycontrols.conf`: the user's own
/// `~/.local/share/flatpak`, the system `/var/lib/flatpak`, and any further
/// root-owned ones the site lists; and those the site turned off, so a
/// refusal can name the key that did it.
package struct FlatpakInstallations: Sendable {
    /// Where an app may be deployed to be identified.
    package var recognised: [FlatpakInstallation]
    /// Installations turned off, with the `[Flatpak]` key that turned each off.
    package var turnedOff: [(installation: FlatpakInstallation, key: String)]

    package init(recognised: [FlatpakInstallation], turnedOff: [(installation: FlatpakInstallation, key: String)] = []) {
        self.recognised = recognised
        self.turnedOff = turnedOff
    }

    /// None: a process in a sandbox is never identified.
    package static let none = FlatpakInstallations(recognised: [])

    /// The installations `configuration` recognises for `account`.
    package static func of(_ configuration: GuardConfiguration, for account: UserAccount) -> FlatpakInstallations {
        var result = FlatpakInstallations.none
        let user = FlatpakInstallation.user(home: account.home, uid: account.uid)
        if configuration.flatpakUserInstallations {
            result.recognised.append(user)
        } else {
            result.turnedOff.append((user, "UserInstallations"))
        }
        if configuration.flatpakSystemInstallation {
            result.recognised.append(.system)
        } else {
            result.turnedOff.append((.system, "SystemInstallation"))
        }
        for path in configuration.flatpakInstallations where path != FlatpakInstallation.system.path {
            result.recognised.append(FlatpakInstallation(path: path, kind: .system))
        }
        // Where an approved per-user app is moved (``FlatpakMoveClient``): root's, as the system one.
        let guardInstallation = configuration.flatpakGuardInstallation
        if !result.recognised.contains(where: { $0.path == guardInstallation }) {
            result.recognised.append(FlatpakInstallation(path: guardInstallation, kind: .system))
        }
        return result
    }

    /// The installation turned off that `path` is in, if any.
    func turnedOff(holding path: String) -> (installation: FlatpakInstallation, key: String)? {
        turnedOff.first { path.hasPrefix($0.installation.path + "/") }
    }
}
