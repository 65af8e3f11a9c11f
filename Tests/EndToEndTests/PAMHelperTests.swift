import Foundation
import Testing
import TestSupport

/// PAM runs in a helper process the Guard can kill: a module that hangs
/// (a directory server down) or crashes fails the one authentication it was
/// running, at `PromptTimeout` at the latest, while another family's
/// guardian approves through the real PAM stack meanwhile, and leaves the
/// Guard with no thread more than it had.
///
/// The faulty module is real C, built here with `cc` against libpam, and
/// put first in the fixture's `familycontrols-guardian` by absolute path; it
/// misbehaves only for the first guardian and ignores everyone else
/// (`PAM_IGNORE`), so the second guardian goes through the shipped stack.
@Suite(.serialized, .enabled(if: canRunGuard && canBuildPAMModules, "needs root, useradd, cc, libpam's headers, and `swift build` products"))
struct PAMHelperTests {
    /// Long enough for the second family's approval (real PAM, a real
    /// password) to finish on a loaded machine while the first hangs.
    static let promptTimeout = 20.0

    enum Fault: String { case hang, crash, report }

    @Test func aModuleThatHangsFailsOnlyItsRequestAtPromptTimeout() async throws {
        try await withFaultyModule(.hang) { guardd, failed, elapsed in
            #expect(failed.status != 0)
            #expect(failed.standardError.contains("timed out"), "\(failed.standardError)")
            // Killed at PromptTimeout, not left to hang (the request itself would wait minutes); and not before.
            // The upper bound leaves a loaded machine a minute to start and end the processes around it.
            #expect(elapsed >= Self.promptTimeout - 0.5 && elapsed < Self.promptTimeout + 60, "\(elapsed) s")
            #expect(guardd.log.contains("said nothing for"), "\(guardd.log)")
            let audit = try await guardd.auditRows()
            #expect(audit.contains { $0.hasPrefix("\(guardd.guardian.name) request ") && $0.hasSuffix(" timed out") }, "\(audit)")
        }
    }

    @Test func aModuleThatCrashesFailsOnlyItsRequestAudited() async throws {
        try await withFaultyModule(.crash) { guardd, failed, _ in
            #expect(failed.status != 0)
            #expect(failed.standardError.contains("Authentication is not available"), "\(failed.standardError)")
            #expect(guardd.log.contains("was killed by SIGSEGV before PAM finished"), "\(guardd.log)")
            let audit = try await guardd.auditRows()
            #expect(audit.contains { $0.hasPrefix("\(guardd.guardian.name) request ") && $0.hasSuffix(" pam error") }, "\(audit)")
        }
    }

    @Test(arguments: [false, true])
    func theHelperHoldsOnlyItsSocketAPathAndReadSearch(inTheUnitsSandbox: Bool) async throws {
        try await withGuard(sandbox: inTheUnitsSandbox ? try GuardSandbox.unit() : GuardSandbox.fromEnvironment) { guardd in
            let report = "\(guardd.directory)/helper-report.txt"
            let module = try await buildModule(.report, for: guardd.guardian.name, in: guardd.directory, report: report)
            let service = "\(guardd.pamDirectory)/familycontrols-guardian"
            let shipped = try String(contentsOfFile: service, encoding: .utf8)
            try "auth requisite \(module)\n\(shipped)".write(toFile: service, atomically: true, encoding: .utf8)

            let result = try await guardd.requestApproved()
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try await guardd.storedStatus() == "approved")

            // What the module saw of its process, from inside pam_sm_authenticate.
            let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map(String.init)
            let descriptors = lines.filter { $0.hasPrefix("fd ") }
            // 0–3, and while the modules authenticate two of the helper's own
            // (``ModuleLog``): descriptor 2 is a pipe whose read end the helper
            // holds (4), and its standard error waits aside to be put back (6).
            #expect(descriptors.map { $0.split(separator: " ")[1] } == ["0", "1", "2", "3", "4", "6"], "\(descriptors)")
            let target = { (number: String) in descriptors.first { $0.hasPrefix("fd \(number) ") }?.split(separator: " ").last }
            #expect(target("2")?.hasPrefix("pipe:") == true && target("2") == target("4"), "\(descriptors)")
            #expect(target("6") != nil && target("6") != target("2"), "\(descriptors)")
            #expect(descriptors.contains { $0.hasPrefix("fd 0 /dev/null") } && descriptors.contains { $0.hasPrefix("fd 1 /dev/null") },
                    "\(descriptors)")
            #expect(descriptors.contains { $0.hasPrefix("fd 3 socket:") }, "\(descriptors)")
            #expect(lines.filter { $0.hasPrefix("env ") } == ["env PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "\(lines)")
            // CAP_DAC_READ_SEARCH (2) alone, for good: effective and permitted.
            #expect(lines.contains("CapEff:\t0000000000000004") && lines.contains("CapPrm:\t0000000000000004"), "\(lines)")
            // PAM ran in the helper alone: the Guard itself never mapped libpam.
            let maps = try await run("/bin/cat", ["/proc/\(try guardd.servingPID())/maps"]).requireSuccess().standardOutput
            #expect(maps.contains("libc.so.6") && !maps.contains("libpam"), "\(maps)")
        }
    }

    /// Whether a process runs whose program is named `arguments[0]`, whose
    /// remaining arguments include `arguments[1...]` in order, and which names
    /// `socket` (this fixture's Guard: other tests run `familyctl approve 1` too).
    static func isRunning(_ arguments: [String], socket: String) -> Bool {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.contains { pid in
            guard pid.allSatisfy(\.isNumber),
                  let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let program = words.first, program.hasSuffix("/" + arguments[0]) || program == arguments[0],
                  words.contains(socket) else { return false }
            return words.dropFirst().joined(separator: "\u{0}").contains(arguments.dropFirst().joined(separator: "\u{0}"))
        }
    }

    @Test func theHelperModeRefusesToRunWithoutTheGuardsSocket() async throws {
        try await withThrowawayUser { user in
            // As a user, with no socket on descriptor 3: nothing to authenticate for.
            let result = try await run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                                                            productPath("familycontrolsd"), "--pam-helper", "1"])
            #expect(result.status == 2)
            #expect(result.standardError == "familycontrolsd --pam-helper: this mode is only for familycontrolsd itself, "
                + "which passes its pid and a socket as descriptor 3\n")
        }
    }

    /// Builds the module, starts a Guard whose guardian service begins with
    /// it, and has the first guardian approve (through the faulty module)
    /// while a second family's guardian approves their child's request
    /// (through the shipped stack); `body` gets the first guardian's
    /// `familyctl approve` and how long it took.
    private func withFaultyModule(_ fault: Fault,
                                  _ body: (GuardFixture, ProcessResult, Double) async throws -> Void) async throws {
        let secondGuardian = try await offload { try makeThrowawayUser(prefix: "q", password: true) }
        defer { removeThrowawayUser(secondGuardian) }
        let fixture = try await offload { try GuardFixture() }
        defer { fixture.tearDown() }
        // The fixture's adult is the second family's child.
        try fixture.writeConfiguration(children: [fixture.child.name, fixture.adult.name], extra: """
            PromptTimeout=\(Int(Self.promptTimeout))s
            [Child \(fixture.adult.name)]
            Guardians=\(secondGuardian.name)
            """)
        let module = try await buildModule(fault, for: fixture.guardian.name, in: fixture.directory)
        let service = "\(fixture.pamDirectory)/familycontrols-guardian"
        let shipped = try String(contentsOfFile: service, encoding: .utf8)
        try "auth requisite \(module)\n\(shipped)".write(toFile: service, atomically: true, encoding: .utf8)
        try await fixture.start()
        try await fixture.waitUntilReconciled()
        let pid = try #require(fixture.process?.processIdentifier)
        let before = try Self.threads(of: pid, excludingPools: true)

        let first = try fixture.startApp(executable: fixture.appExecutable)
        defer { first.stop() }
        let firstID = try await first.waitForPendingRequest()
        let second = try RunningApp(arguments: fixture.commandLine(
            as: fixture.adult, executable: fixture.appExecutable(for: fixture.adult), ["request", "--member", "child", "--stdin"]))
        defer { second.stop() }
        let secondID = try await second.waitForPendingRequest()

        let started = Date()
        // Bounded, so a Guard that never answers fails the test instead of hanging it.
        let guardian = fixture.guardian
        async let stuck = run("/usr/bin/timeout", ["60", "/usr/bin/setpriv", "--reuid=\(guardian.uid)", "--regid=\(guardian.gid)",
                                                   "--clear-groups", productPath("familyctl"), "approve", String(firstID), "--stdin",
                                                   "--socket", fixture.socket], input: "\(guardian.password ?? "")\n")
        // While the first guardian's PAM hangs or crashes, the second family is served.
        try await Task.sleep(for: .milliseconds(500))
        let approved = try await fixture.familyctlAsGuardian(["approve", String(secondID), "--stdin"], as: secondGuardian,
                                                             input: "\(secondGuardian.password ?? "")\n")
        #expect(approved.status == 0, "\(approved.standardError)")
        if fault == .hang {
            // The first guardian's `familyctl approve` is still waiting on the
            // hung module: had the Guard made the second family wait behind
            // it, the first would have had its "timed out" and ended first.
            #expect(Self.isRunning(["familyctl", "approve", String(firstID)], socket: fixture.socket), "the second family waited behind the hung module")
        }
        second.endInput()
        #expect(await second.exitStatus() == 0, "\(second.standardError)")
        #expect(try await fixture.storedStatus(user: fixture.adult.name) == "approved")

        let failed = try await stuck
        // And the probe sees it ended, so the check above can fail.
        #expect(!Self.isRunning(["familyctl", "approve", String(firstID)], socket: fixture.socket))
        let elapsed = Date().timeIntervalSince(started)
        #expect(fixture.process?.isRunning == true, "the Guard died: \(fixture.log)")
        #expect(try await fixture.storedStatus() == "notDetermined")
        try await body(fixture, failed, elapsed)
        #expect(!fixture.log.contains(fixture.guardian.password ?? "-"))
        #expect(!fixture.log.contains(secondGuardian.password ?? "-"))

        // No helper is left, and once the child's app gives up waiting, every
        // thread the requests took ends (the pools' idle ones after 30 s):
        // the Guard holds what it held before.
        first.stop()
        // Reaped as its end is seen: a moment later on a loaded machine, not never.
        var helpers = try SecretResidueTests.children(of: pid)
        for _ in 0..<100 where !helpers.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            helpers = try SecretResidueTests.children(of: pid)
        }
        #expect(helpers.isEmpty, "a helper process was left for 10 s: \(helpers)")
        var after = try Self.threads(of: pid, excludingPools: false)
        for _ in 0..<90 where after != before {
            try await Task.sleep(for: .milliseconds(500))
            after = try Self.threads(of: pid, excludingPools: false)
        }
        #expect(after == before, "the Guard had \(before) threads besides its idle pools, and has \(after): \(Self.threadNames(of: pid))")
    }

    /// A PAM module that, for `user` only, sleeps forever or dereferences NULL.
    private func buildModule(_ fault: Fault, for user: String, in directory: String, report: String = "") async throws -> String {
        let source = "\(directory)/pam_fault.c"
        let module = "\(directory)/pam_fault_\(fault.rawValue).so"
        let misbehave = switch fault {
        case .hang: "for (;;) pause();"
        case .crash: "*(volatile int *)0 = 0;"
        case .report: "describe(\"\(report)\"); return PAM_IGNORE;"
        }
        try """
            #include <security/pam_modules.h>
            #include <dirent.h>
            #include <limits.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>

            extern char **environ;

            /* The process's capabilities, descriptors and environment, into `path`. */
            static void describe(const char *path) {
                FILE *out = fopen(path, "w");
                if (out == NULL) return;
                char line[512];
                FILE *status = fopen("/proc/self/status", "r");
                while (status != NULL && fgets(line, sizeof line, status) != NULL)
                    if (strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0) fputs(line, out);
                if (status != NULL) fclose(status);
                DIR *fds = opendir("/proc/self/fd");
                struct dirent *entry;
                while (fds != NULL && (entry = readdir(fds)) != NULL) {
                    if (entry->d_name[0] == '.') continue;
                    int fd = atoi(entry->d_name);
                    if (fd == dirfd(fds) || fd == fileno(out)) continue;
                    char link[64], target[PATH_MAX] = "";
                    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                    ssize_t length = readlink(link, target, sizeof target - 1);
                    if (length > 0) target[length] = 0;
                    fprintf(out, "fd %d %s\\n", fd, target);
                }
                if (fds != NULL) closedir(fds);
                for (char **variable = environ; *variable != NULL; variable++) fprintf(out, "env %s\\n", *variable);
                fclose(out);
            }

            PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
                const char *user = NULL;
                if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL || strcmp(user, "\(user)") != 0)
                    return PAM_IGNORE;
                \(misbehave)
                return PAM_AUTH_ERR;
            }

            PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
                return PAM_IGNORE;
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        try await run("/usr/bin/cc", ["-shared", "-fPIC", "-o", module, source, "-lpam"]).requireSuccess()
        chmod(module, 0o644)
        return module
    }

    /// The Guard's threads (`Threads:` of `/proc/PID/status`), less those of its
    /// pools (`guard-work`, `guard-talk`) when `excludingPools`.
    static func threads(of pid: Int32, excludingPools: Bool) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Threads:") })
        let total = try #require(Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)))
        guard excludingPools else { return total }
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        let pooled = tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("guard-work") || name.hasPrefix("guard-talk")
        }
        return total - pooled.count
    }

    /// The names of the Guard's threads, for a failure message.
    static func threadNames(of pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.map { ((try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .newlines) }
    }
}

/// Whether a PAM module can be built here: `cc` and libpam's headers.
private var canBuildPAMModules: Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/cc")
        && FileManager.default.fileExists(atPath: "/usr/include/security/pam_modules.h")
}
