/// A program's file capabilities, as the `security.capability` extended
/// attribute holds them (`struct vfs_cap_data` of <linux/capability.h>,
/// capabilities(7)): what anyone who runs the program gets, whatever their uid.
struct FileCapabilities: Equatable {
    /// Bit `n`: capability `n` is in the program's permitted set, which
    /// it gets on `execve` (bounded by the caller's bounding set, which
    /// ordinary logins do not narrow). A program without the effective
    /// flag can still raise them itself.
    var permitted: UInt64
    /// `VFS_CAP_FLAGS_EFFECTIVE`: the capabilities are raised at once, for
    /// programs that know nothing of them (a copy of `chattr`).
    var effective: Bool

    /// Decodes the attribute's value; nil when it is not one the kernel
    /// would honour for everyone: an unknown revision, a short value, or a
    /// version 3 value for another user namespace's root (`rootid` not 0).
    init?(attribute bytes: [UInt8]) {
        func word(_ index: Int) -> UInt32? {
            let offset = index * 4
            guard bytes.count >= offset + 4 else { return nil }
            return (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
        }
        guard let magic = word(0) else { return nil }
        let revision = magic & 0xFF00_0000
        effective = magic & 0x1 != 0
        switch revision {
        case 0x0100_0000:  // VFS_CAP_REVISION_1: 32 capabilities.
            guard bytes.count == 12, let low = word(1) else { return nil }
            permitted = UInt64(low)
        case 0x0200_0000, 0x0300_0000:  // 2 and 3: 64; 3 adds the namespace's root uid.
            guard let low = word(1), let high = word(3) else { return nil }
            if revision == 0x0300_0000 {
                guard bytes.count == 24, word(5) == 0 else { return nil }
            } else if bytes.count != 20 {
                return nil
            }
            permitted = UInt64(low) | UInt64(high) << 32
        default:
            return nil
        }
    }

    init(permitted: UInt64, effective: Bool) {
        self.permitted = permitted
        self.effective = effective
    }

    /// The capabilities' numbers, lowest first.
    var numbers: [Int] { (0..<64).filter { permitted & (1 << UInt64($0)) != 0 } }

    /// `cap_linux_immutable,cap_sys_admin=ep` (or `=p`), as `getcap(8)` writes it.
    var text: String {
        numbers.map(Self.name).joined(separator: ",") + (effective ? "=ep" : "=p")
    }

    /// Those of them that defeat the locks or make the caller someone else, with why.
    var dangerous: [(name: String, why: String)] {
        numbers.compactMap { number in Self.dangers[number].map { (Self.name(number), $0) } }
    }

    /// `cap_chown`, or `cap_63` for a number the kernel of this writing does not name.
    static func name(_ number: Int) -> String {
        number < names.count ? names[number] : "cap_\(number)"
    }

    /// Each a capability name's number in <linux/capability.h>.
    private static let names = [
        "cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid", "cap_kill", "cap_setgid",
        "cap_setuid", "cap_setpcap", "cap_linux_immutable", "cap_net_bind_service", "cap_net_broadcast", "cap_net_admin",
        "cap_net_raw", "cap_ipc_lock", "cap_ipc_owner", "cap_sys_module", "cap_sys_rawio", "cap_sys_chroot",
        "cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot", "cap_sys_nice", "cap_sys_resource",
        "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease", "cap_audit_write", "cap_audit_control",
        "cap_setfcap", "cap_mac_override", "cap_mac_admin", "cap_syslog", "cap_wake_alarm", "cap_block_suspend",
        "cap_audit_read", "cap_perfmon", "cap_bpf", "cap_checkpoint_restore",
    ]

    /// The capabilities that defeat the locks, each with why. The others
    /// (binding low ports, raw sockets, locking memory, the clock, signals,
    /// BPF and the like) are site policy: a program outside the
    /// distribution's own that grants only those is a warning.
    private static let dangers: [Int: String] = [
        9: "cap_linux_immutable clears the immutable attribute the locks are made of",
        21: "cap_sys_admin mounts over any folder and administers nearly everything",
        1: "cap_dac_override writes any file: the Guard's, a guardian's login files",
        2: "cap_dac_read_search reads any file: password hashes, a guardian's keys, the Guard's store",
        3: "cap_fowner changes the mode and attributes of any file as if it were the owner",
        0: "cap_chown takes any file for the child, the Guard's and a guardian's too",
        6: "cap_setgid joins any group: sudo, disk, a guardian's",
        7: "cap_setuid becomes any user: root, a guardian",
        31: "cap_setfcap gives any program any capability",
        16: "cap_sys_module loads code into the kernel",
        17: "cap_sys_rawio reads and writes the disks and memory directly",
        19: "cap_sys_ptrace takes over root's processes, the Guard's too",
        27: "cap_mknod makes a disk's device file the child may then write",
        33: "cap_mac_admin changes the security policy itself",
    ]
}
