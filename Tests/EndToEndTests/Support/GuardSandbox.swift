import Foundation
import TestSupport

/// What of `familycontrolsd.service`'s sandbox a test can apply without
/// systemd, in a mount namespace of the Guard's own (`unshare`): the
/// capability bounding set and `NoNewPrivileges=` (`setpriv`), `/proc` as
/// `ProtectProc=` and `ProcSubset=` mount it, the trees `ProtectSystem=`
/// makes read-only with the `ReadWritePaths=` left writable, and the network
/// namespace of `PrivateNetwork=`.
///
/// The system call filter, the address families and `MemoryDenyWriteExecute=`
/// are applied too where the machine can (``SystemCallSandbox``). Not
/// applied: `PrivateTmp=` (the fixtures live in `/tmp`), and what needs
/// systemd itself: devices, IP address filters, the hostname and clock.
struct GuardSandbox: Sendable {
    /// The capabilities the Guard keeps, as `CAP_NAME`.
    var capabilities: [String]
    var noNewPrivileges = true
    /// `/proc`'s `hidepid=` and `subset=` options, or nil to leave `/proc` alone.
    var procOptions: String?
    /// Folders mounted read-only, and folders below them left writable
    /// (ignored when missing, as a `-` prefix asks).
    var readOnlyPaths: [String] = []
    var writablePaths: [String] = []
    var privateNetwork = false
    /// The seccomp filter, or nil when the unit sets none or this machine cannot apply it.
    var systemCalls: SystemCallSandbox?
    /// A datagram socket the Guard finds at `/dev/log` (syslog's), in a
    /// `/dev` of its own that keeps the host's devices: nothing the host's
    /// syslog receives, and nothing left on the host.
    var devLog: String?

    /// The sandbox the shipped unit asks for.
    static func unit() throws -> GuardSandbox {
        try unit(ShippedUnit.load())
    }

    /// The sandbox `unit` asks for (another shipped unit than the Guard's).
    static func unit(_ unit: ShippedUnit) throws -> GuardSandbox {
        var options: [String] = []
        if let protect = unit.value("ProtectProc"), protect != "default" { options.append("hidepid=\(protect)") }
        if let subset = unit.value("ProcSubset"), subset != "all" { options.append("subset=\(subset)") }
        return GuardSandbox(capabilities: try unit.capabilities(), noNewPrivileges: unit.value("NoNewPrivileges") == "yes",
                            procOptions: options.isEmpty ? nil : options.joined(separator: ","),
                            readOnlyPaths: try unit.readOnlyTrees(), writablePaths: unit.writablePaths,
                            privateNetwork: unit.value("PrivateNetwork") == "yes",
                            systemCalls: SystemCallSandbox.isAvailable ? try SystemCallSandbox.unit(unit) : nil)
    }

    /// The unit's sandbox less `capability`.
    static func unit(without capability: String) throws -> GuardSandbox {
        var sandbox = try unit()
        sandbox.capabilities.removeAll { $0 == capability }
        return sandbox
    }

    /// `FAMILYCONTROLS_TEST_SANDBOX=unit` runs every Guard the end-to-end
    /// tests start inside the unit's sandbox.
    static let fromEnvironment: GuardSandbox? = {
        guard ProcessInfo.processInfo.environment["FAMILYCONTROLS_TEST_SANDBOX"] == "unit" else { return nil }
        do {
            return try unit()
        } catch {
            fatalError("FAMILYCONTROLS_TEST_SANDBOX=unit: \(error)")
        }
    }()

    /// `command` run inside the sandbox, as root, with `directory` (the
    /// fixture's) a shared mount first: on a systemd machine every mount is
    /// shared, so filesystems mounted later under it reach the Guard's own
    /// namespace too; a test machine's may be private.
    func wrap(_ command: [String], sharing directory: String) -> [String] {
        let share = "mountpoint -q \"$1\" || { mount --bind \"$1\" \"$1\" && mount --make-shared \"$1\"; }; shift; exec \"$@\""
        return ["/bin/sh", "-c", share, "share", directory] + wrap(command)
    }

    /// Undoes what ``wrap(_:sharing:)`` did to `directory`.
    func unshare(_ directory: String) {
        _ = try? run("/bin/umount", ["--lazy", directory])
    }

    /// `command` run inside the sandbox, as root.
    func wrap(_ command: [String]) -> [String] {
        // setpriv names capabilities in lower case, without the CAP_ prefix.
        let names = capabilities.map { "+" + $0.dropFirst("CAP_".count).lowercased() }.joined(separator: ",")
        var bounded = ["/usr/bin/setpriv", "--bounding-set=-all\(names.isEmpty ? "" : "," + names)",
                       "--inh-caps=-all", "--ambient-caps=-all"]
        if noNewPrivileges { bounded.append("--no-new-privs") }
        bounded += systemCalls?.wrap(command) ?? command
        var mounts: [String] = []
        if let procOptions { mounts.append("mount -t proc -o \(procOptions) proc /proc") }
        if let devLog {
            mounts.append("""
                host=$(mktemp -d); mount --rbind /dev "$host"; mount -t tmpfs -o mode=0755 dev /dev
                for node in null zero full random urandom tty; do touch "/dev/$node"; mount --bind "$host/$node" "/dev/$node"; done
                mkdir /dev/pts /dev/shm; touch /dev/log; mount --bind '\(devLog)' /dev/log; umount -l "$host"; rmdir "$host"
                """)
        }
        for path in readOnlyPaths {
            mounts.append("if [ -d '\(path)' ]; then mount --rbind '\(path)' '\(path)' && mount -o remount,bind,ro '\(path)'; fi")
        }
        // A bind mount copies the read-only flag of the mount it comes from.
        for path in writablePaths {
            mounts.append("if [ -d '\(path)' ]; then mount --bind '\(path)' '\(path)' && mount -o remount,bind,rw '\(path)'; fi")
        }
        guard !mounts.isEmpty || privateNetwork else { return bounded }
        // Slave propagation, as systemd sets it up: the Guard's own mounts,
        // and the host's as they come and go.
        let script = (["set -e"] + mounts + ["exec \"$@\""]).joined(separator: "\n")
        return ["/usr/bin/unshare", "--mount", "--propagation", "slave"] + (privateNetwork ? ["--net"] : [])
            + ["/bin/sh", "-c", script, "sandbox"] + bounded
    }
}
