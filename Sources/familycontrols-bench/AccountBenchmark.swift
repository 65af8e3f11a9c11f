// A login's PAM account phase with pam_familycontrols.so's line against the
// same stack without it (Debian's common-account), as pamtester runs it:
// whole processes, interleaved, one run; for a child whose line is read and
// decided on, and for a user without a line.
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// `familycontrols-bench account [--runs N] [--module PATH]`: needs root
/// (service files in /etc/pam.d, a state file of root's) and pamtester.
func runAccountBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench account: must be run as root (PAM service files, a root-owned state file)\n")
        return 77
    }
    var runs = 300
    var module = "/usr/lib/x86_64-linux-gnu/security/pam_familycontrols.so"
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        switch (flag, rest.popFirst()) {
        case ("--runs", let text?) where Int(text).map({ $0 > 0 }) == true:
            runs = Int(text) ?? runs
        case ("--module", let path?) where path.hasPrefix("/"):
            module = path
        default:
            writeToStandardError("familycontrols-bench account: usage: account [--runs N] [--module /PATH/pam_familycontrols.so]\n")
            return 64
        }
    }
    let pamtester = "/usr/bin/pamtester"
    guard access(pamtester, X_OK) == 0 else {
        print("account: skipped, pamtester is not installed (Debian: pamtester)")
        return 0
    }
    guard access(module, R_OK) == 0 else {
        writeToStandardError("familycontrols-bench account: no \(module); build one with Config/build-pam-module.sh PATH and pass --module PATH\n")
        return 1
    }
    do {
        try AccountBenchmark(runs: runs, module: module, pamtester: pamtester).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench account: \(error)\n")
        return 1
    }
}

private struct AccountBenchmark {
    let runs: Int
    let module: String
    let pamtester: String
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Debian's common-account as pam-auth-update writes it, with no other profile.
    static let stack = """
        account [success=1 new_authtok_reqd=done default=ignore] pam_unix.so
        account requisite pam_deny.so
        account required pam_permit.so

        """

    func run() throws {
        let id = String(getpid())
        let limits = "/run/fcbench-account-\(id).limits"
        let without = "fcbench-account-\(id)-without", with = "fcbench-account-\(id)-with"
        defer {
            for path in [limits, "/etc/pam.d/\(without)", "/etc/pam.d/\(with)"] { unlink(path) }
        }
        try write(Self.stack, to: "/etc/pam.d/\(without)", mode: 0o644)
        try write(Self.stack + "account [success=ok ignore=ignore perm_denied=bad default=ignore] \(module) limits=\(limits)\n",
                  to: "/etc/pam.d/\(with)", mode: 0o644)
        // nobody is the child, inside hours every day with time left; daemon has no line.
        guard let child = getpwnam("nobody")?.pointee.pw_uid, getpwnam("daemon") != nil else {
            throw Failure(description: "needs the accounts nobody and daemon")
        }
        var local = tm()
        var seconds = time(nil)
        localtime_r(&seconds, &local)
        let day = "\(Int(local.tm_year) + 1900)-\(twoDigits(Int(local.tm_mon) + 1))-\(twoDigits(Int(local.tm_mday)))"
        let hours = Array(repeating: "0000-2400", count: 7).joined(separator: "/")
        var text = "familycontrols-login-limits 1\n# written by familycontrols-bench\n"
        for uid in [60001, 60002, 60003] {
            text += "child \(uid) \(day) 100 3600 0 0730-2000/0730-2000/0730-2000/0730-2000/0730-2000/0900-2100/0900-2100 0 Other App\n"
        }
        text += "child \(child) \(day) 100 36000 0 \(hours) 0 FamilyControls Demo\n"
        try write(text, to: limits, mode: 0o600)

        print("account: pamtester acct_mgmt, Debian's common-account with and without pam_familycontrols.so's line; "
            + "\(runs) runs each, interleaved; medians.")
        for (label, user) in [("(a) a child with limits (nobody)", "nobody"), ("(b) a user without limits (daemon)", "daemon")] {
            let ours = try measure([pamtester, with, user, "acct_mgmt"], [pamtester, without, user, "acct_mgmt"])
            let ratio = ours.with / ours.without
            print("\(label): \(formatted(ours.with * 1000, digits: 3)) ms vs \(formatted(ours.without * 1000, digits: 3)) ms; "
                + "ratio \(formatted(ratio, digits: 3))× [target ≤ 1.10×: \(ratio <= 1.1 ? "met" : "NOT met")]")
            print("    processor time: \(formatted(ours.withCPU * 1000, digits: 3)) ms vs \(formatted(ours.withoutCPU * 1000, digits: 3)) ms; "
                + "ratio \(formatted(ours.withCPU / max(ours.withoutCPU, 1e-9), digits: 3))×")
        }
    }

    private func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    private func write(_ text: String, to path: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw Failure(description: "cannot write \(path): errno \(errno)") }
        defer { close(fd) }
        fchmod(fd, mode)
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw Failure(description: "cannot write \(path)") }
    }

    /// Medians of `runs` runs of each command, alternating, after a warm-up.
    private func measure(_ with: [String], _ without: [String]) throws
        -> (with: Double, without: Double, withCPU: Double, withoutCPU: Double) {
        let timings = try compareCommands(with, without, runs: runs, warmUp: 10)
        return (timings.ours, timings.theirs, timings.oursCPU, timings.theirsCPU)
    }
}
