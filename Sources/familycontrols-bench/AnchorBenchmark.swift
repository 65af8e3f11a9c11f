// The administrator's tools against the system tools they are compared with:
// `familyctl status` (a whole process, to a running Guard) against `pkcheck`
// (a whole process, to a running polkitd on a private system bus);
// `familyctl authenticate` on a permit-only PAM stack against `pamtester` on
// the same stack; and the Guard's resident memory against polkitd's.
// A comparison whose anchor is not installed is skipped, with the reason.
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// `familycontrols-bench anchors [--runs N]`: needs root (the Guard and PAM do).
func runAnchorBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench anchors: must be run as root (it starts a Guard)\n")
        return 77
    }
    var runs = 200
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        guard flag == "--runs", let text = rest.popFirst(), let value = Int(text), value > 0 else {
            writeToStandardError("familycontrols-bench anchors: usage: anchors [--runs N]\n")
            return 64
        }
        runs = value
    }
    do {
        try AnchorBenchmark(runs: runs).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench anchors: \(error)\n")
        return 1
    }
}

private struct AnchorBenchmark {
    let runs: Int
    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() throws {
        let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        let familyctl = "\(binaries)/familyctl", guardBinary = "\(binaries)/familycontrolsd"
        for binary in [familyctl, guardBinary] where access(binary, X_OK) != 0 {
            throw Failure(description: "no \(binary); build the programs as installed first (Config/build.sh familycontrols-bench)")
        }
        let directory = "/tmp/fcbench-anchors-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var children: [pid_t] = []
        defer {
            for pid in children {
                kill(pid, SIGTERM)
                var status: CInt = 0
                waitpid(pid, &status, 0)
            }
        }

        // The Guard, on its own socket and store, run from a copy written as
        // install(1) and dpkg write one: how the page cache holds a program
        // decides how much of it the kernel maps around each page touched,
        // and the linker's output is held otherwise than an installed file.
        // Beside the build, not in /tmp, which may be a tmpfs.
        let installedGuard = "\(binaries)/.anchors-familycontrolsd-\(getpid())"
        defer { unlink(installedGuard) }
        try Data(contentsOf: URL(fileURLWithPath: guardBinary)).write(to: URL(fileURLWithPath: installedGuard))
        chmod(installedGuard, 0o755)
        let socket = "\(directory)/guard.socket"
        try "[Apps]\nRoots=\(directory)/apps/%u\n".write(toFile: "\(directory)/guard.conf", atomically: true, encoding: .utf8)
        children.append(try spawn([installedGuard, "--socket", socket, "--state-dir", "\(directory)/state",
                                   "--config", "\(directory)/guard.conf"]))
        try waitUntil("the Guard to answer") { try runProcess([familyctl, "status", "--socket", socket]) == 0 }
        print("Anchors: whole processes, \(runs) runs each, interleaved; medians.")

        // polkitd on a private system bus, if installed.
        var polkitd: pid_t?
        let candidates = ["/usr/lib/polkit-1/polkitd", "/usr/libexec/polkitd"]
        let polkitBinary = candidates.first { path in access(path, X_OK) == 0 }
        let pkcheck = "/usr/bin/pkcheck", busDaemon = "/usr/bin/dbus-daemon"
        if let polkitBinary, access(pkcheck, X_OK) == 0, access(busDaemon, X_OK) == 0 {
            let bus = "\(directory)/system_bus_socket"
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>unix:path=\(bus)</listen>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_type="*"/>
                  </policy>
                </busconfig>
                """.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
            children.append(try spawn([busDaemon, "--nofork", "--config-file=\(directory)/bus.conf"]))
            setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(bus)", 1)
            try waitUntil("the private system bus") { access(bus, F_OK) == 0 }
            let started = try spawn([polkitBinary, "--no-debug"])
            children.append(started)
            polkitd = started
            try waitUntil("polkitd to answer") {
                try runProcess([pkcheck, "--action-id", "org.freedesktop.policykit.exec", "--process", String(getpid())]) == 0
            }
            let timings = try compare(
                [familyctl, "status", "--socket", socket],
                [pkcheck, "--action-id", "org.freedesktop.policykit.exec", "--process", String(getpid())])
            report("(a)", "familyctl status vs pkcheck", timings, target: 0.3)
        } else {
            print("(a) familyctl status vs pkcheck: skipped, polkitd, pkcheck or dbus-daemon is not installed "
                + "(Debian: polkitd pkexec dbus)")
        }

        // One PAM authentication on a permit-only stack, in /etc/pam.d for pamtester.
        if access("/usr/bin/pamtester", X_OK) == 0 {
            let service = "fcbench-permit-\(getpid())"
            let file = "/etc/pam.d/\(service)"
            try "auth required pam_permit.so\naccount required pam_permit.so\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            defer { unlink(file) }
            try "[Authentication]\nIndividualService=\(service)\n"
                .write(toFile: "\(directory)/permit.conf", atomically: true, encoding: .utf8)
            let timings = try compare(
                [familyctl, "authenticate", "root", "--member", "individual", "--config", "\(directory)/permit.conf", "--stdin"],
                ["/usr/bin/pamtester", service, "root", "authenticate"])
            report("(b)", "familyctl authenticate vs pamtester (pam_permit stack)", timings, target: 1.3)
            // What any program pays before its first line (the runtime's start),
            // so the PAM work itself can be compared.
            let start = try compare([familyctl, "--version"], ["/bin/true"])
            print("    start alone: familyctl --version \(formatted(start.ours * 1000, digits: 2)) ms, /bin/true \(formatted(start.theirs * 1000, digits: 2)) ms; "
                + "authenticate's own work \(formatted((timings.ours - start.ours) * 1000, digits: 2)) ms vs pamtester's "
                + "\(formatted((timings.theirs - start.theirs) * 1000, digits: 2)) ms")
        } else {
            print("(b) familyctl authenticate vs pamtester: skipped, pamtester is not installed (Debian: pamtester)")
        }

        // Resident memory, both idle after serving the calls above: first
        // 0.3 s after them, then 2 s after, once the Guard has been quiet for
        // the second after which it lets go of the code it ran.
        usleep(300_000)
        let afterCalls = ResidentMemory(of: children[0])
        let polkitdAfterCalls = polkitd.map { ResidentMemory(of: $0) }
        print("    0.3 s after the calls: Guard \(afterCalls.resident) kB (RssAnon \(afterCalls.anonymous) kB)"
            + (polkitdAfterCalls.map { "; polkitd \($0.resident) kB; ratio "
                + formatted(Double(afterCalls.resident) / Double(max($0.resident, 1)), digits: 2) + "×" } ?? ""))
        usleep(1_700_000)
        let guardMemory = ResidentMemory(of: children[0])
        print("(c) Guard resident memory, idle 2 s: \(guardMemory.resident) kB (RssAnon \(guardMemory.anonymous) kB)", terminator: "")
        if let polkitd {
            let theirs = ResidentMemory(of: polkitd)
            let ratio = Double(guardMemory.resident) / Double(max(theirs.resident, 1))
            print("; polkitd \(theirs.resident) kB (RssAnon \(theirs.anonymous) kB); ratio \(formatted(ratio, digits: 2))× "
                + "[target ≤ 0.60×: \(ratio <= 0.6 ? "met" : "NOT met")]")
        } else {
            print("; polkitd not installed, no comparison")
        }
    }

    private func report(_ label: String, _ name: String, _ timings: Timings, target: Double) {
        let ratio = timings.ours / timings.theirs
        let cpuRatio = timings.oursCPU / max(timings.theirsCPU, 1e-9)
        print("\(label) \(name): \(formatted(timings.ours * 1000, digits: 2)) ms vs \(formatted(timings.theirs * 1000, digits: 2)) ms; "
            + "ratio \(formatted(ratio, digits: 2))× [target ≤ \(formatted(target, digits: 2))×: \(ratio <= target ? "met" : "NOT met")]")
        print("    processor time: \(formatted(timings.oursCPU * 1000, digits: 2)) ms vs \(formatted(timings.theirsCPU * 1000, digits: 2)) ms; "
            + "ratio \(formatted(cpuRatio, digits: 2))×")
    }

    private func compare(_ ours: [String], _ theirs: [String]) throws -> Timings {
        try compareCommands(ours, theirs, runs: runs, warmUp: 5)
    }

    typealias Timings = CommandTimings

    private func waitUntil(_ what: String, _ ready: () throws -> Bool) throws {
        for _ in 0..<200 {
            if try ready() { return }
            usleep(25_000)
        }
        throw Failure(description: "gave up waiting for \(what)")
    }
}

/// Two commands' median wall-clock and processor times, in seconds.
struct CommandTimings {
    var ours, theirs, oursCPU, theirsCPU: Double
}

/// Medians of `runs` runs of each command, alternating, after `warmUp`
/// runs of each: wall-clock time, and processor time.
func compareCommands(_ ours: [String], _ theirs: [String], runs: Int, warmUp: Int) throws -> CommandTimings {
    var a: [Double] = [], b: [Double] = [], aCPU: [Double] = [], bCPU: [Double] = []
    for index in -warmUp..<runs {
        for (command, isOurs) in [(ours, true), (theirs, false)] {
            let start = monotonicSeconds()
            let (status, cpu) = try runMeasured(command)
            let elapsed = monotonicSeconds() - start
            guard status == 0 else {
                throw AnchorBenchmark.Failure(description: "\(command.joined(separator: " ")) failed (wait status \(status))")
            }
            guard index >= 0 else { continue }
            if isOurs {
                a.append(elapsed)
                aCPU.append(cpu)
            } else {
                b.append(elapsed)
                bCPU.append(cpu)
            }
        }
    }
    return CommandTimings(ours: median(a), theirs: median(b), oursCPU: median(aCPU), theirsCPU: median(bCPU))
}

/// Starts `arguments` with standard input, output and error on /dev/null.
func spawn(_ arguments: [String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
        posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
    }
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
    guard spawned == 0 else { throw Errno(spawned, operation: "posix_spawn \(arguments[0])") }
    return pid
}

/// Runs `arguments` to completion, quietly; returns its wait status.
private func runProcess(_ arguments: [String]) throws -> CInt {
    try runMeasured(arguments).status
}

/// Runs `arguments` to completion, quietly; returns its wait status and the
/// processor time (user and system) it used, which other load on the
/// machine barely changes.
func runMeasured(_ arguments: [String]) throws -> (status: CInt, cpu: Double) {
    let pid = try spawn(arguments)
    var status: CInt = 0
    var usage = rusage()
    _ = try retryingOnInterrupt("wait4") { wait4(pid, &status, 0, &usage) }
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return (status, seconds(usage.ru_utime) + seconds(usage.ru_stime))
}
