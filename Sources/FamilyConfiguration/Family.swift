import SystemKit

/// Who is a child and who guards them, answered through NSS at the moment of
/// asking, so LDAP, SSSD and `/etc/group` changes count without a restart.
package struct Family: Sendable {
    package var configuration: GuardConfiguration

    package init(configuration: GuardConfiguration) {
        self.configuration = configuration
    }

    /// Whether `account` is listed as a child of any family, by name or through a group.
    /// - Throws: ``Errno`` when NSS cannot answer (a directory that is down)
    ///   and no other entry lists `account`.
    package func isChild(_ account: UserAccount) throws(Errno) -> Bool {
        var failure: Errno?
        for family in configuration.allFamilies {
            do throws(Errno) {
                if try Self.matches(account, family.children) { return true }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return false
    }

    /// Whether `guardian` may approve for `child`: `child` is a user listed
    /// as a child (an adult has no guardian, whatever `Guardians=` says),
    /// `guardian` is not the child and is listed as the child's guardian:
    /// in `[Child NAME]` when the child has such a list, else as a guardian
    /// of a family the child is a child of (the plain `[Family]` or a
    /// `[Family NAME]`; never a family the child is not in).
    package func isGuardian(_ guardian: UserAccount, of child: String) throws(Errno) -> Bool {
        guard guardian.name != child, Principal.isValidName(child), let account = try UserDatabase.user(named: child)
        else { return false }
        if let own = configuration.childGuardians[child] {
            guard try Self.matches(guardian, own) else { return false }
            return try isChild(account)
        }
        // A family whose group cannot be looked up now is no "no" from the others.
        var failure: Errno?
        for family in configuration.allFamilies {
            do throws(Errno) {
                if try Self.matches(guardian, family.guardians), try Self.matches(account, family.children) { return true }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return false
    }

    /// The names of the families `child` is a child of (nil for the plain
    /// `[Family]`), in the configuration's order.
    package func families(of child: UserAccount) throws(Errno) -> [String?] {
        var names: [String?] = []
        for family in configuration.allFamilies {
            if try Self.matches(child, family.children) { names.append(family.sectionArgument) }
        }
        return names
    }

    /// The administrator's approval of `appID` for `child`: from the first
    /// family the child is a child of whose `ApprovedApps=` names it; nil
    /// when none does (then a guardian decides).
    package func configuredApproval(of appID: String, for child: UserAccount) throws(Errno) -> ConfiguredApproval? {
        for family in configuration.allFamilies {
            guard let approval = family.approvedApps.first(where: { $0.appID == appID }) else { continue }
            if try Self.matches(child, family.children) { return approval }
        }
        return nil
    }

    /// Whether `account` is named as a guardian anywhere: of a family, or of
    /// one child. Someone who is not cannot guard anyone, whatever is recorded.
    package func guardsSomeone(_ account: UserAccount) throws(Errno) -> Bool {
        for family in configuration.allFamilies {
            if try Self.matches(account, family.guardians) { return true }
        }
        for principals in configuration.childGuardians.values where try Self.matches(account, principals) { return true }
        return false
    }

    /// Whether every group a family's `Children=` names can be found now:
    /// when one cannot (a directory that is down, a group removed), no one's
    /// absence from the families is a fact worth revoking on.
    package func everyChildGroupResolves() -> Bool {
        for family in configuration.allFamilies {
            for case .group(let name) in family.children {
                guard (try? UserDatabase.group(named: name)) != nil else { return false }
            }
        }
        return true
    }

    /// The app roots for `account`, expanded.
    package func appRoots(for account: UserAccount) -> [String] {
        configuration.appRoots.map { AppRootTemplate.expand($0, for: account) }
    }

    /// Whether `principals` list `account`, by name or through a group.
    /// A group NSS cannot look up now (a directory down, SSSD stopped) is
    /// no "no": a later name or group of the list may still say yes, as
    /// a local user listed after a directory group does.
    /// - Throws: the first lookup's ``Errno`` when none said yes.
    private static func matches(_ account: UserAccount, _ principals: [Principal]) throws(Errno) -> Bool {
        var groupIDs: [UInt32]?
        var failure: Errno?
        for principal in principals {
            switch principal {
            case .user(let name):
                if name == account.name { return true }
            case .group(let name):
                let found: GroupEntry?
                do throws(Errno) {
                    found = try UserDatabase.group(named: name)
                } catch {
                    failure = failure ?? error
                    continue
                }
                guard let group = found else { continue }
                if group.members.contains(account.name) { return true }
                if groupIDs == nil { groupIDs = UserDatabase.groupIDs(of: account) }
                if groupIDs?.contains(group.gid) == true { return true }
            }
        }
        if let failure { throw failure }
        return false
    }
}
