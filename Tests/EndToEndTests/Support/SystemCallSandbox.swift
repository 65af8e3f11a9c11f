import Foundation
import TestSupport

/// The unit's seccomp settings, applied without systemd: `SystemCallFilter=`
/// (named sets expanded as `systemd-analyze syscall-filter` lists them),
/// `SystemCallErrorNumber=`, `RestrictAddressFamilies=` and
/// `MemoryDenyWriteExecute=` (the kernel's `PR_SET_MDWE`, as newer systemd
/// uses it), loaded through libseccomp by a few lines of Python that then
/// exec the Guard.
struct SystemCallSandbox: Sendable {
    /// The system calls allowed; every other fails with `errorName`.
    var allowed: [String]
    var errorName: String
    /// The socket families allowed (`AF_UNIX`); nil allows every one.
    var addressFamilies: [String]?
    var memoryDenyWriteExecute: Bool

    static let libseccomp = ["/usr/lib/x86_64-linux-gnu/libseccomp.so.2", "/usr/lib/aarch64-linux-gnu/libseccomp.so.2"]
        .first { FileManager.default.fileExists(atPath: $0) }

    /// Whether this machine can apply it: libseccomp (every systemd machine
    /// has it), python3, and systemd-analyze to name the sets.
    static let isAvailable = libseccomp != nil && canAnalyzeUnits
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// The unit's filter, or nil when it sets none.
    static func unit(_ unit: ShippedUnit) throws -> SystemCallSandbox? {
        let lines = unit.values("SystemCallFilter")
        guard let first = lines.first else { return nil }
        guard !first.hasPrefix("~") else { throw FixtureError("SystemCallFilter=\(first): a deny list is not applied here") }
        let sets = try namedSets()
        var allowed = Set<String>()
        for line in lines {
            let denied = line.hasPrefix("~")
            let names = try line.drop { $0 == "~" }.split(separator: " ").flatMap { try expand(String($0), in: sets) }
            if denied { allowed.subtract(names) } else { allowed.formUnion(names) }
        }
        let families = unit.values("RestrictAddressFamilies").flatMap { $0.split(separator: " ").map(String.init) }
        guard !families.contains(where: { $0.hasPrefix("~") }) else { throw FixtureError("RestrictAddressFamilies=~: not applied here") }
        return SystemCallSandbox(allowed: allowed.sorted(), errorName: unit.value("SystemCallErrorNumber") ?? "EPERM",
                                 addressFamilies: families.isEmpty ? nil : families,
                                 memoryDenyWriteExecute: unit.value("MemoryDenyWriteExecute") == "yes")
    }

    /// `name`, or the calls of the set `@name` and of the sets it names.
    private static func expand(_ name: String, in sets: [String: [String]]) throws -> [String] {
        guard name.hasPrefix("@") else { return [name] }
        guard let members = sets[name] else { throw FixtureError("systemd-analyze knows no set \(name)") }
        return try members.flatMap { try expand($0, in: sets) }
    }

    /// Every set `systemd-analyze syscall-filter` lists: a name at the start
    /// of a line, then its members indented, comments among them.
    private static func namedSets() throws -> [String: [String]] {
        let listed = try run("/usr/bin/systemd-analyze", ["syscall-filter", "--no-pager"]).requireSuccess().standardOutput
        var sets: [String: [String]] = [:]
        var current: String?
        for line in listed.split(separator: "\n") {
            if line.hasPrefix("@") {
                current = String(line)
                sets[String(line)] = []
            } else if let current, line.hasPrefix(" ") {
                let member = line.trimmingCharacters(in: .whitespaces)
                if !member.isEmpty, !member.hasPrefix("#") { sets[current, default: []].append(member) }
            }
        }
        return sets
    }

    /// `command`, started with the filter loaded.
    func wrap(_ command: [String]) -> [String] {
        guard let library = Self.libseccomp else { return command }
        return ["/usr/bin/python3", "-c", Self.loader, library, errorName, (addressFamilies ?? []).joined(separator: ","),
                memoryDenyWriteExecute ? "mdwe" : "-", allowed.joined(separator: ",")] + command
    }

    /// argv: library, error name, families, mdwe or -, allowed calls, then the command.
    private static let loader = """
        import ctypes, errno, os, socket, sys
        library, error, families, mdwe, names = sys.argv[1:6]
        command = sys.argv[6:]
        seccomp = ctypes.CDLL(library, use_errno=True)
        class Compare(ctypes.Structure):
            _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]
        seccomp.seccomp_init.restype = ctypes.c_void_p
        seccomp.seccomp_init.argtypes = [ctypes.c_uint32]
        seccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        seccomp.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                                   ctypes.POINTER(Compare)]
        seccomp.seccomp_load.argtypes = [ctypes.c_void_p]
        ALLOW, EQ, NE = 0x7fff0000, 4, 1
        def fail(number): return 0x00050000 | number
        def add(action, call, *compares):
            array = (Compare * len(compares))(*compares) if compares else None
            if seccomp.seccomp_rule_add_array(context, action, call, len(compares), array) != 0:
                sys.exit("seccomp_rule_add failed for %d" % call)
        context = seccomp.seccomp_init(fail(getattr(errno, error)))
        socket_call = seccomp.seccomp_syscall_resolve_name(b"socket")
        allowed = [getattr(socket, name) for name in families.split(",") if name]
        for name in names.split(","):
            call = seccomp.seccomp_syscall_resolve_name(name.encode())
            # Negative: a call this architecture does not have.
            if call < 0 or (call == socket_call and allowed):
                continue
            add(ALLOW, call)
        for family in allowed:
            add(ALLOW, socket_call, Compare(0, EQ, family, 0))
        if len(allowed) == 1:
            # As systemd answers for a family it does not allow.
            add(fail(errno.EAFNOSUPPORT), socket_call, Compare(0, NE, allowed[0], 0))
        if mdwe == "mdwe" and ctypes.CDLL(None, use_errno=True).prctl(65, 1, 0, 0, 0) != 0:
            sys.exit("prctl PR_SET_MDWE: " + os.strerror(ctypes.get_errno()))
        if seccomp.seccomp_load(context) != 0:
            sys.exit("seccomp_load failed")
        os.execv(command[0], command)
        """
}
