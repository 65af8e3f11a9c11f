import SystemKit

/// Who is a child and who guards them, answered through NSS at the moment of
/// asking, so LDAP, SSSD and `/etc/group` changes count without a restart.
package struct Family: Sendable {
    package var configuration: GuardConfiguration

    package init(configuration: GuardConfiguration) {
        self.configuration = configuration
    }

    /// Whether `account` is listed as a child, by name or through a group.
    /// - Throws: ``Errno`` when NSS cannot answer (a directory that is down).
    package func isChild(_ account: UserAccount) throws(Errno) -> Bool {
        try Self.matches(account, configuration.children)
    }

    /// Whether `guardian` may approve for `child`: `child` is a user listed
    /// as a child (an adult has no guardian, whatever `Guardians=` says),
    /// `guardian` is listed as the child's guardian (or the family's, when the
    /// child has no list of its own), and is not the child.
    package func isGuardian(_ guardian: UserAccount, of child: String) throws(Errno) -> Bool {
        guard guardian.name != child, Principal.isValidName(child),
              try Self.matches(guardian, configuration.guardianPrincipals(of: child)),
              let account = try UserDatabase.user(named: child)
        else { return false }
        return try isChild(account)
    }

    /// Whether `account` is named as a guardian anywhere: the family's, or
    /// one child's. Someone who is not cannot guard anyone, whatever is recorded.
    package func guardsSomeone(_ account: UserAccount) throws(Errno) -> Bool {
        if try Self.matches(account, configuration.guardians) { return true }
        for principals in configuration.childGuardians.values where try Self.matches(account, principals) { return true }
        return false
    }

    /// The app roots for `account`, expanded.
    package func appRoots(for account: UserAccount) -> [String] {
        configuration.appRoots.map { AppRootTemplate.expand($0, for: account) }
    }

    private static func matches(_ account: UserAccount, _ principals: [Principal]) throws(Errno) -> Bool {
        var groupIDs: [UInt32]?
        for principal in principals {
            switch principal {
            case .user(let name):
                if name == account.name { return true }
            case .group(let name):
                guard let group = try UserDatabase.group(named: name) else { continue }
                if group.members.contains(account.name) { return true }
                if groupIDs == nil { groupIDs = UserDatabase.groupIDs(of: account) }
                if groupIDs?.contains(group.gid) == true { return true }
            }
        }
        return false
    }
}
