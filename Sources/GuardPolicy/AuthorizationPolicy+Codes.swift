import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import SystemKit

// A parent or guardian's one-time code (``GuardianCodes``): enrolled from
// their own session, typed at the child's screen.
extension AuthorizationPolicy {
    /// `familyctl code enroll`: `requester`, a guardian of someone, proves
    /// who they are (PAM on the guardian service over their own connection,
    /// as for `familyctl approve`), then gets a new secret, replacing theirs.
    /// - Returns: the secret in base32, to be shown once.
    /// - Throws: `PermissionDenied` for root or someone who is no one's
    ///   guardian; the authentication's failure; `Unavailable` when the file
    ///   cannot be written.
    package func enrollCode(for requester: UserAccount, proof: GuardianProof) throws(GuardFailure) -> SecretBytes {
        guard requester.uid != 0 else {
            throw GuardFailure(.permissionDenied, "root has no one-time code: a parent or guardian runs familyctl code enroll as themself")
        }
        let guards: Bool
        do throws(Errno) {
            guards = try family.guardsSomeone(requester)
        } catch {
            throw GuardFailure(.unavailable, "the family's groups cannot be read: \(error)")
        }
        guard guards else {
            ledger.audit(.code, actor: requester.name, user: requester.name, appID: nil, member: nil, outcome: .refused,
                         detail: "code enroll: not a parent or guardian of anyone in the family")
            throw GuardFailure(.permissionDenied, "\(requester.name) is not a parent or guardian of anyone in the family")
        }
        // The name becomes a field of pam_oath's tab-separated file: a plain user name only.
        guard Principal.isValidName(requester.name) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\(requester.name.clipped) is not a plain user name; "
                + "no code can be enrolled for it")
        }
        let file = family.configuration.guardianCodeFile
        try authenticate(requester, .code, child: requester.name, appID: nil, context: "code enroll",
                         showing: "You are about to enrol a new one-time code for \(requester.name), replacing any you had.",
                         proof: proof)
        let secret = try codes.enroll(requester.name, in: file)
        ledger.audit(.code, actor: requester.name, user: requester.name, appID: nil, member: nil, outcome: .enrolled,
                     detail: "one-time code enrolled in \(file)")
        logger.notice("code: \(requester.name) enrolled a one-time code")
        return Base32.encode(secret)
    }

    /// `familyctl code remove [USER]`: the caller's own code, or for root
    /// anyone's.
    /// - Returns: whether there was one.
    /// - Throws: `PermissionDenied` for someone else's code; `Unavailable`
    ///   when the file cannot be written.
    package func removeCode(of user: String?, requester: UserAccount) throws(GuardFailure) -> Bool {
        let whose = user ?? requester.name
        guard Principal.isValidName(whose) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(whose.clipped)\" is not a valid user name")
        }
        guard requester.uid == 0 || whose == requester.name else {
            throw GuardFailure(.permissionDenied, "only root may remove another's one-time code")
        }
        let file = family.configuration.guardianCodeFile
        let removed = try codes.remove(whose, in: file)
        ledger.audit(.code, actor: requester.name, user: whose, appID: nil, member: nil,
                     outcome: removed ? .removed : .noEffect, detail: removed ? "one-time code removed" : "no one-time code to remove")
        if removed { logger.notice("code: \(requester.name) removed \(whose)'s one-time code") }
        return removed
    }

    /// Whether the alert of `child`'s app offers "a parent or guardian is
    /// here": `InSessionApproval=code`, or not set, and a guardian of the
    /// child has enrolled a code. A file that cannot be read offers nothing.
    func offersGuardianCode(to child: String) -> Bool {
        let configuration = family.configuration
        switch configuration.inSessionApprovalSetting {
        case .yes, .no: return false
        case .code, nil: break
        }
        let enrolled: Set<String>
        do throws(GuardFailure) {
            enrolled = try codes.enrolled(in: configuration.guardianCodeFile)
        } catch {
            logger.warning("code: \(error.message); the alert offers no one-time code")
            return false
        }
        return enrolled.contains { name in
            guard Principal.isValidName(name), let account = try? UserDatabase.user(named: name) else { return false }
            return (try? family.isGuardian(account, of: child)) == true && name != child
        }
    }
}
