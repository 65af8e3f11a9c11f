import FamilyConfiguration
import PAM
import FamilyControlsModel
import GuardProtocol
import SystemKit
import GuardIdentity
import GuardStore

/// The Guard's decisions: the authorization state machine per (user, app),
/// following Apple's reference text clause by clause.
///
/// It coordinates the parts that each own one thing: the ledger of
/// authorizations and their audit (``AuthorizationLedger``), what a person
/// sees and answers (``AuthenticationSheet``), the requests waiting for a
/// guardian (``GuardianDesk``), and the locks (``LockKeeper``). Requests run
/// on threads of their own: they block on people and on PAM.
package final class AuthorizationPolicy: Sendable {
    package struct Settings: Sendable {
        /// A pam.d folder to read instead of `/etc/pam.d` (tests, staging).
        package var pamDirectory: String?
        /// Denials kept per user; older ones are forgotten.
        package var maximumDenialsPerUser: Int
        /// The Guard's state folder, where a Flatpak move run in a helper
        /// journals (`flatpak-moves`), as the move service does.
        package var stateDirectory: String
        package init(pamDirectory: String? = nil, maximumDenialsPerUser: Int = 32,
                     stateDirectory: String = GuardStateDirectory.standard) {
            self.pamDirectory = pamDirectory
            self.maximumDenialsPerUser = maximumDenialsPerUser
            self.stateDirectory = stateDirectory
        }
    }

    package let ledger: AuthorizationLedger
    package let keeper: LockKeeper
    let sheet: AuthenticationSheet
    let desk: GuardianDesk
    package let families: FamilyState
    package let logger: Logger
    /// The one turn per (user, app): a request's whole life, and the short
    /// save every decision takes (which never waits for a person).
    let turns = AppTurns()
    let quota: RequestQuota
    /// What root's `familyctl status` warns about (``ChildPrivilegeCheck``).
    package let standingWarnings = StandingWarnings()
    /// When each guardian last authenticated, per terminal session (`GuardianTimeout=`).
    let timestamps: GuardianTimestamps
    /// The Guard's bounds; ``GuardService`` and the daemon's server read theirs here.
    package let limits: GuardLimits
    /// The guardians' one-time-code secrets (`GuardianCodeFile=`).
    let codes = GuardianCodes()

    /// - Parameter authenticator: runs PAM; the Guard's runs each transaction
    ///   in a helper process (``PAMHelperClient``), a unit test's is scripted.
    package init(store: Store, configuration: GuardConfiguration, locker: any AppLocker,
                 settings: Settings = Settings(), limits: GuardLimits = GuardLimits(),
                 authenticator: any Authenticating = PAMHelperClient(),
                 logger: Logger = Logger(label: "guard")) throws(StoreError) {
        self.logger = logger
        self.limits = limits
        quota = RequestQuota(burst: limits.requestBurst, interval: limits.requestInterval)
        timestamps = GuardianTimestamps(capacity: limits.guardianSessions)
        families = FamilyState(configuration)
        let families = families
        ledger = try AuthorizationLedger(store: store, logger: logger, maximumDenialsPerUser: settings.maximumDenialsPerUser,
                                         limits: limits, retention: { families.current.configuration.auditRetention })
        ledger.pruneAuditIfDue()
        sheet = AuthenticationSheet(ledger: ledger, families: families, logger: logger, pamDirectory: settings.pamDirectory,
                                    authenticator: authenticator)
        desk = GuardianDesk(ledger: ledger, families: families, limits: limits, logger: logger)
        keeper = LockKeeper(locker: locker, ledger: ledger, families: families, logger: logger, turns: turns,
                            stateDirectory: settings.stateDirectory)
    }

    /// The family as last loaded.
    package var family: Family { families.current }

    /// Replaces the configuration (SIGHUP). The approvals follow it: those
    /// of children who left every family, and those the configuration made
    /// and no longer gives, are revoked and unlocked.
    package func reload(_ configuration: GuardConfiguration) {
        families.replace(with: configuration)
        followTheConfiguration()
    }

    /// Start-up reconcile: the store is the truth; every approved child app is locked,
    /// every other lock released. Logs what it repaired. Runs beside serving.
    package func reconcile() {
        do throws(GuardFailure) {
            let findings = try keeper.verify(repair: true)
            logger.info(findings.isEmpty ? "reconcile: every lock matches the store"
                                         : "reconcile: repaired or reported \(findings.count) problem(s)")
        } catch {
            logger.error("reconcile: \(error.message)")
        }
        // Not the children who left: a Guard started on another or an absent
        // file (an uninstall's check, a rescue) must not take that for a decision.
        revokeWhatTheConfigurationNoLongerApproves()
    }

    /// Revokes what the configuration no longer allows (on reload and at
    /// each periodic check; never when it names no child at all): every child approval of a user who is no
    /// longer a child of any family (removed from the group in the directory,
    /// while it still exists), and every approval the configuration made that no file
    /// gives any more. A user NSS cannot look up now keeps theirs.
    package func followTheConfiguration() {
        // A configuration that names no child at all is no decision that every child left.
        guard family.configuration.allFamilies.contains(where: { !$0.children.isEmpty }) else {
            return revokeWhatTheConfigurationNoLongerApproves()
        }
        do throws(GuardFailure) {
            for user in try childrenWhoLeft() {
                for record in try ledger.authorizations(user: user) where record.member == .child && record.status == .approved {
                    try turns.save(StatusHub.Key(user: user, appID: record.appID)) { () throws(GuardFailure) in
                        try revoke(user: user, appID: record.appID, actor: "configuration",
                                   detail: "no longer a child of any family")
                    }
                }
            }
        } catch {
            logger.error("cannot revoke the approvals of children who left every family: \(error.message)")
        }
        revokeWhatTheConfigurationNoLongerApproves()
    }

    /// Users with approved child authorizations who exist and are no longer
    /// children of any family. Only a positive answer counts: a user NSS
    /// cannot look up now, or does not know (an account deleted, or a
    /// directory that answers "no such user" while it is down), keeps their
    /// locks; so does everyone while a group a family names cannot be found.
    package func childrenWhoLeft() throws(GuardFailure) -> [String] {
        let family = self.family
        guard family.everyChildGroupResolves() else {
            logger.warning("a group named in Children= cannot be found now; every child keeps their approvals until it can")
            return []
        }
        let records = try ledger.authorizations()
        let users = Set(records.filter { $0.member == .child && $0.status == .approved }.map(\.user))
        return users.sorted().filter { user in
            let account: UserAccount?
            do throws(Errno) {
                account = try UserDatabase.user(named: user)
            } catch {
                logger.warning("cannot look up \(user) (\(error)); keeping their locks until it can be")
                return false
            }
            guard let account, records.contains(where: { $0.user == user && $0.uid == account.uid }) else { return false }
            return (try? family.isChild(account)) == false
        }
    }
}
