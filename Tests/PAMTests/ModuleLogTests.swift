import PAM
import Testing

/// What pam_sss logs, read back by the PAM helper: only its own answer
/// `PAM_AUTHINFO_UNAVAIL` for the user asked (or a request SSSD could not
/// take) says the directory could not be reached.
@Suite struct ModuleLogTests {
    static let prefix = "familycontrolsd: pam_sss(familycontrols-guardian:auth): "

    @Test func pamSSSsAnswerThatItCannotReachTheDirectoryForTheUserSaysSo() {
        let log = Self.prefix + "authentication failure; logname= uid=0 euid=0 tty= ruser=kid rhost= user=teacher\n"
            + Self.prefix + "received for user teacher: 9 (Authentication service cannot retrieve authentication info)\n"
        #expect(ModuleLog.saysDirectoryUnreachable(log, user: "teacher"))
        #expect(ModuleLog.saysDirectoryUnreachable(Self.prefix + "Request to sssd failed. Timer expired\n", user: "teacher"))
    }

    @Test func aWrongPasswordAnotherUserOrAnotherModuleSaysNothingOfTheDirectory() {
        let wrong = Self.prefix + "received for user teacher: 7 (Authentication failure)\n"
        #expect(!ModuleLog.saysDirectoryUnreachable(wrong, user: "teacher"))
        let other = Self.prefix + "received for user teacher2: 9 (Authentication service cannot retrieve authentication info)\n"
        #expect(!ModuleLog.saysDirectoryUnreachable(other, user: "teacher"))
        let module = "familycontrolsd: pam_other(familycontrols-guardian:auth): received for user teacher: 9 (x)\n"
        #expect(!ModuleLog.saysDirectoryUnreachable(module, user: "teacher"))
        #expect(!ModuleLog.saysDirectoryUnreachable("", user: "teacher"))
    }

    /// Behind a stack with another password module, that module may be the
    /// one that refused: with anything it logged, the failure stays a failure.
    @Test func anotherPasswordModulesLinesKeepTheFailureAFailure() {
        let unreachable = Self.prefix + "received for user teacher: 9 (Authentication service cannot retrieve authentication info)\n"
        let unix = "familycontrolsd[7]: pam_unix(familycontrols-guardian:auth): check pass; user unknown\n"
        #expect(ModuleLog.saysDirectoryUnreachable(unix + unreachable, user: "teacher"))
        let krb5 = "familycontrolsd[7]: pam_krb5(familycontrols-guardian:auth): authentication failure; logname=root uid=0 euid=0 "
            + "tty= ruser=kid rhost= user=teacher\n"
        #expect(!ModuleLog.saysDirectoryUnreachable(unix + krb5 + unreachable, user: "teacher"))
        #expect(!ModuleLog.saysDirectoryUnreachable(unreachable + krb5, user: "teacher"))
        #expect(ModuleLog.module(of: krb5.dropLast()) == "pam_krb5")
        #expect(ModuleLog.module(of: "familycontrolsd[7]: PAM unable to dlopen(pam_x.so)"[...]) == nil)
    }
}
