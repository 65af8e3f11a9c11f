import Foundation
import SystemKit
import TestSupport

/// A user directory as a school has one: a real OpenLDAP server (`slapd`) of
/// this test's own on a loopback port, with its own configuration, database
/// and base DN under a temporary folder, and the machine's SSSD pointed at it
/// (`sssd -c` with a configuration of this test's; `sss` added to the
/// passwd and group lines of /etc/nsswitch.conf while it runs). Users and
/// groups are made with unique names; the server can be stopped (the
/// outage) and started again. ``tearDown()`` stops both daemons, restores
/// nsswitch.conf and removes what SSSD left (its caches and sockets), also
/// after a failure. Nothing is installed here: `Config/install.sh --packages-only`
/// installs slapd, ldap-utils, sssd-ldap, sssd-tools, libnss-sss and libpam-sss.
final class DirectoryServer: @unchecked Sendable {
    /// Why the directory tests cannot run on this machine, or nil when they can.
    static var unavailableReason: String? {
        guard canManageUsers else { return "needs root" }
        let needed = ["/usr/sbin/slapd", "/usr/sbin/slapmodify", "/usr/bin/ldapadd", "/usr/bin/ldapmodify", "/usr/bin/ldapsearch",
                      "/usr/sbin/sssd", "/usr/sbin/sss_cache"]
        let architecture = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"].first {
            FileManager.default.fileExists(atPath: "\($0)/libnss_sss.so.2")
        }
        guard let architecture, FileManager.default.fileExists(atPath: "\(architecture)/security/pam_sss.so"),
              FileManager.default.fileExists(atPath: "/usr/lib/ldap/back_mdb.so")
                || FileManager.default.fileExists(atPath: "\(architecture)/ldap/back_mdb.so"),
              needed.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else {
            return "needs slapd, ldap-utils, sssd-ldap, libnss-sss and libpam-sss (Config/install.sh --packages-only)"
        }
        if let pid = try? String(contentsOfFile: "/run/sssd.pid", encoding: .utf8),
           let number = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)), kill(number, 0) == 0 {
            return "an sssd runs on this machine already; the test runs its own"
        }
        return nil
    }

    /// The stack the shipped familycontrols-guardian documents for directory
    /// users, which keeps pam_sss's PAM_AUTHINFO_UNAVAIL: its commented lines.
    static func documentedDirectoryStack() throws -> [String] {
        let shipped = try String(contentsOfFile: "\(packageRoot)/pam.d/familycontrols-guardian", encoding: .utf8)
        guard let start = shipped.range(of: "# Users in a directory") else {
            throw FixtureError("pam.d/familycontrols-guardian documents no stack for directory users")
        }
        let lines = shipped[start.lowerBound...].split(separator: "\n").map(String.init)
            .prefix { $0.hasPrefix("#") }
            .filter { $0.hasPrefix("#   auth") }
            .map { String($0.dropFirst("#   ".count)) }
        guard lines.count == 4, lines.contains(where: { $0.contains("pam_sss.so") }) else {
            throw FixtureError("the documented directory stack is not pam_unix, pam_sss, pam_deny, pam_permit: \(lines)")
        }
        return lines
    }

    let directory: String
    /// Unique to this server: its base DN's first part and its SSSD domain's name.
    let domain: String
    let baseDN: String
    let port: Int
    private var rootDN: String { "cn=admin,\(baseDN)" }
    private var rootPasswordFile: String { "\(directory)/rootpw" }
    private var configFile: String { "\(directory)/slapd.conf" }
    private var sssdConfig: String { "\(directory)/sssd.conf" }
    private var slapdPIDFile: String { "\(directory)/slapd.pid" }
    private var server: Daemon?
    private var sssd: Daemon?
    private var nsswitch: String?
    private var usedIDs: Set<UInt32> = []
    /// SSSD's state folders, and what was in them before this test's sssd ran.
    private static let stateFolders = ["/var/lib/sss/db", "/var/lib/sss/pipes", "/var/lib/sss/mc", "/var/lib/sss/pubconf"]
    private let filesBefore: Set<String>
    private var tornDown = false

    /// What SSSD said, for a failure's message.
    var sssdLogText: String { (try? String(contentsOfFile: "\(directory)/sssd.log", encoding: .utf8)) ?? "" }

    /// Starts slapd with an empty directory, SSSD for it, and NSS through SSSD.
    init() throws {
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o700)
        domain = "fc" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        baseDN = "dc=\(domain),dc=test"
        port = try freeLoopbackPort()
        filesBefore = Self.stateFiles()
        do {
            try writeServerConfiguration()
            try startServer()
            try ldap("ldapadd", """
                dn: \(baseDN)
                objectClass: dcObject
                objectClass: organization
                o: \(domain)
                dc: \(domain)

                dn: ou=people,\(baseDN)
                objectClass: organizationalUnit
                ou: people

                dn: ou=groups,\(baseDN)
                objectClass: organizationalUnit
                ou: groups
                """)
            try startSSSD()
            try addSSSToNSSwitch()
        } catch {
            tearDown()
            throw error
        }
    }

    deinit { tearDown() }

    private func writeServerConfiguration() throws {
        let rootPassword = randomPassword()
        let module = ["/usr/lib/ldap", "/usr/lib/x86_64-linux-gnu/ldap", "/usr/lib/aarch64-linux-gnu/ldap"]
            .first { FileManager.default.fileExists(atPath: "\($0)/back_mdb.so") } ?? "/usr/lib/ldap"
        try FileManager.default.createDirectory(atPath: "\(directory)/db", withIntermediateDirectories: false)
        // Anyone may read the directory (as SSSD does, anonymously); a password only serves to bind.
        let configuration = """
            include /etc/ldap/schema/core.schema
            include /etc/ldap/schema/cosine.schema
            include /etc/ldap/schema/nis.schema
            include /etc/ldap/schema/inetorgperson.schema
            pidfile \(slapdPIDFile)
            argsfile \(directory)/slapd.args
            modulepath \(module)
            moduleload back_mdb
            database mdb
            maxsize 16777216
            suffix "\(baseDN)"
            rootdn "\(rootDN)"
            rootpw \(rootPassword)
            directory \(directory)/db
            access to attrs=userPassword by self write by anonymous auth by * none
            access to * by * read

            """
        try write(configuration, to: configFile, mode: 0o600)
        try write(rootPassword, to: rootPasswordFile, mode: 0o600)
    }

    private func write(_ text: String, to path: String, mode: mode_t) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
            throw FixtureError("cannot write \(path)")
        }
        chmod(path, mode)
    }

    /// Runs an LDAP client as the directory's administrator with `ldif` as its input.
    private func ldap(_ tool: String, _ ldif: String) throws {
        let result = try run("/usr/bin/\(tool)", ["-x", "-H", "ldap://127.0.0.1:\(port)", "-D", rootDN, "-y", rootPasswordFile],
                             input: ldif + "\n")
        guard result.succeeded else { throw FixtureError("\(tool) failed (\(result.status)): \(result.standardError)") }
    }

    // MARK: - The server and its outage

    /// Whether slapd runs.
    var isServing: Bool { server?.isRunning ?? false }

    /// Starts slapd on the loopback port and waits until it takes connections.
    /// `-d 0` keeps it in the foreground, a child of this process: a daemon
    /// that forked would keep Foundation's watch on its parent open.
    func startServer() throws {
        let logPath = "\(directory)/slapd.log"
        let process = try Daemon(start: "/usr/sbin/slapd", ["-d", "0", "-h", "ldap://127.0.0.1:\(port)/", "-f", configFile],
                                 log: logPath, truncating: false)
        server = process
        for _ in 0..<200 {
            let probe = try run("/usr/bin/ldapsearch", ["-x", "-H", "ldap://127.0.0.1:\(port)", "-b", "", "-s", "base", "-LLL", "dn"])
            if probe.succeeded { return }
            if let exit = process.exit {
                throw FixtureError("slapd \(exit): "
                    + ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""))
            }
            usleep(50_000)
        }
        throw FixtureError("slapd did not answer on 127.0.0.1:\(port) within 10 s")
    }

    /// Stops slapd (the directory's outage) and waits until it has exited.
    func stopServer() throws {
        server?.stop(waitingSeconds: 3)
        server = nil
    }

    /// Starts slapd again after ``stopServer()`` and tells SSSD to go online at once (SIGUSR2).
    func restartServer() throws {
        try startServer()
        sssd?.signal(SIGUSR2)
    }

    // MARK: - SSSD and NSS

    private func startSSSD() throws {
        let configuration = """
            [sssd]
            services = nss, pam
            domains = \(domain)

            [nss]
            memcache_timeout = 0
            entry_negative_timeout = 1

            [domain/\(domain)]
            id_provider = ldap
            auth_provider = ldap
            ldap_uri = ldap://127.0.0.1:\(port)
            ldap_search_base = \(baseDN)
            ldap_schema = rfc2307
            ldap_id_use_start_tls = false
            ldap_auth_disable_tls_never_use_in_production = true
            ldap_network_timeout = 2
            ldap_opt_timeout = 2
            enumerate = false
            cache_credentials = false
            entry_cache_timeout = 1
            offline_timeout = 1
            min_id = 3000000
            max_id = 3999999

            """
        try write(configuration, to: sssdConfig, mode: 0o600)
        // sssd now and then fails to make a new domain's cache at its start
        // ("Entry @ATTRIBUTES already exists"): that start's leftovers go, and it starts again.
        var failure = ""
        for _ in 0..<3 {
            if try launchSSSD() { return }
            failure = sssdLogText
            stopSSSD()
            removeSSSDState()
        }
        throw FixtureError("sssd did not start: \(failure)")
    }

    /// Starts sssd once. - Returns: whether its NSS and PAM sockets take
    /// connections within 30 s (under 1 s alone; over 10 s has been seen
    /// with the whole suite on two cores).
    private func launchSSSD() throws -> Bool {
        let process = try Daemon(start: "/usr/sbin/sssd", ["-i", "-c", sssdConfig, "--logger=stderr", "-d", "1"],
                                 log: "\(directory)/sssd.log", truncating: true)
        sssd = process
        for _ in 0..<600 {
            if Self.acceptsConnections("/var/lib/sss/pipes/nss"), Self.acceptsConnections("/var/lib/sss/pipes/pam") { return true }
            guard process.isRunning else { return false }
            usleep(50_000)
        }
        return false
    }

    /// Whether a Unix socket at `path` takes a connection (closed at once).
    private static func acceptsConnections(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Whether any of sssd's responders or back ends still runs (the machine runs no sssd of its own).
    private static var responderRuns: Bool {
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.contains { pid in
            guard Int32(pid) != nil, let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return false }
            return name.hasPrefix("sssd_")
        }
    }

    private func stopSSSD() {
        guard let sssd else { return }
        sssd.stop(waitingSeconds: 10)
        // Its responders end after it: wait, so that none writes to the state removed next.
        for _ in 0..<100 where Self.responderRuns { usleep(50_000) }
        self.sssd = nil
    }

    /// Every file under SSSD's state folders.
    private static func stateFiles() -> Set<String> {
        var files: Set<String> = []
        for folder in stateFolders {
            guard let walker = FileManager.default.enumerator(atPath: folder) else { continue }
            while let path = walker.nextObject() as? String { files.insert("\(folder)/\(path)") }
        }
        return files
    }

    /// Removes what this test's sssd left in its state folders: its caches,
    /// and its sockets, where a lookup would otherwise be refused (ECONNREFUSED,
    /// an error to every program) instead of finding no sssd (not found).
    private func removeSSSDState() {
        for file in Self.stateFiles().subtracting(filesBefore).sorted(by: >) {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            try? FileManager.default.removeItem(atPath: file)
        }
    }

    /// Restarts SSSD with nothing cached: while slapd is down, it then knows
    /// none of the directory's users and groups, as a machine that has never
    /// seen them (or whose cache expired) does.
    func restartSSSDWithAnEmptyCache() throws {
        stopSSSD()
        removeSSSDState()
        try startSSSD()
    }

    /// Makes `folder` hold what SSSD's pipes folder holds after a crash:
    /// its `nss` and `pam` sockets, with nothing listening on them, where
    /// every lookup NSS passes to SSSD fails (ECONNREFUSED), which no program
    /// can take for "no such user or group". Bind-mounted over
    /// /var/lib/sss/pipes in one process's mount namespace, only it sees the outage.
    static func makeSocketsNothingListensOn(in folder: String) throws {
        try FileManager.default.createDirectory(atPath: "\(folder)/private", withIntermediateDirectories: true)
        for name in ["nss", "pam", "private/pam"] {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw FixtureError("socket: errno \(errno)") }
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path = "\(folder)/\(name)"
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { throw FixtureError("bind \(path): errno \(errno)") }
            chmod(path, 0o666)
        }
    }

    /// Marks everything SSSD cached as expired (`sss_cache -E`): the next
    /// lookup asks the directory.
    func expireCache() throws {
        try run("/usr/sbin/sss_cache", ["-E"]).requireSuccess()
    }

    private func addSSSToNSSwitch() throws {
        let path = "/etc/nsswitch.conf"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var changed = false
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first, first == "passwd:" || first == "group:", !words.contains("sss") else { return String(line) }
            changed = true
            return line + " sss"
        }
        guard changed else { return }
        nsswitch = text
        try Self.rewriteInPlace(path, lines.joined(separator: "\n"))
    }

    /// Writes `text` into the file at `path` itself, not into a new file
    /// renamed over it: another test's Guard may run in a mount namespace
    /// with its own file bound over this path, and replacing the file here
    /// would detach that mount there (the kernel does so for a mount point
    /// renamed over in another namespace).
    private static func rewriteInPlace(_ path: String, _ text: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw FixtureError("cannot open \(path) for writing") }
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(text.utf8))
    }

    // MARK: - Users and groups

    /// A uid (and gid) of the range SSSD serves that no local account or
    /// group has. Read from the files, not asked of NSS: SSSD would
    /// remember the "no such uid" for a while after the user is made.
    private func freshID() throws -> UInt32 {
        let local = try ["/etc/passwd", "/etc/group"].flatMap { path in
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
                .compactMap { line in line.split(separator: ":", omittingEmptySubsequences: false).dropFirst(2).first }
                .compactMap { UInt32($0) }
        }
        while true {
            let id = UInt32.random(in: 3_000_000..<3_900_000)
            if !usedIDs.contains(id), !local.contains(id) {
                usedIDs.insert(id)
                return id
            }
        }
    }

    /// Adds a person with a random password, and their own group of the
    /// same name (as `useradd -U` makes one), and waits until NSS sees them.
    func addUser(prefix: String) throws -> ThrowawayUser {
        let name = "fcl\(prefix)" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let id = try freshID()
        let password = randomPassword()
        try ldap("ldapadd", """
            dn: uid=\(name),ou=people,\(baseDN)
            objectClass: inetOrgPerson
            objectClass: posixAccount
            uid: \(name)
            cn: \(name)
            sn: \(name)
            uidNumber: \(id)
            gidNumber: \(id)
            homeDirectory: /nonexistent
            loginShell: /bin/sh
            userPassword: \(password)

            dn: cn=\(name),ou=groups,\(baseDN)
            objectClass: posixGroup
            cn: \(name)
            gidNumber: \(id)
            """)
        // Both ways, as the Guard looks people up: by name and by a caller's uid.
        for _ in 0..<100 {
            if let entry = getpwnam(name), entry.pointee.pw_uid == id, let byID = getpwuid(id),
               String(cString: byID.pointee.pw_name) == name, getgrgid(id) != nil {
                return ThrowawayUser(name: name, uid: id, gid: id, home: "/nonexistent", password: password)
            }
            usleep(100_000)
        }
        throw FixtureError("NSS does not see the directory's \(name) within 10 s: \(sssdLogText)")
    }

    /// Adds a group with `members` and a unique name; returns the name.
    func addGroup(prefix: String, members: [ThrowawayUser]) throws -> String {
        let name = "fcl\(prefix)" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let lines = ["dn: cn=\(name),ou=groups,\(baseDN)", "objectClass: posixGroup", "cn: \(name)", "gidNumber: \(try freshID())"]
            + members.map { "memberUid: \($0.name)" }
        try ldap("ldapadd", lines.joined(separator: "\n"))
        for _ in 0..<100 {
            if getgrnam(name) != nil { return name }
            usleep(100_000)
        }
        throw FixtureError("NSS does not see the directory's group \(name) within 10 s: \(sssdLogText)")
    }

    /// Removes `user` from `group` in the directory (`ldapmodify`, slapd running).
    func remove(_ user: ThrowawayUser, from group: String) throws {
        try ldap("ldapmodify", "dn: cn=\(group),ou=groups,\(baseDN)\nchangetype: modify\ndelete: memberUid\nmemberUid: \(user.name)")
    }

    /// Removes `user` from `group` in slapd's database while slapd is
    /// stopped (`slapmodify`): the directory has changed, and cannot say so.
    func removeWhileStopped(_ user: ThrowawayUser, from group: String) throws {
        guard !isServing else { throw FixtureError("slapmodify needs slapd stopped") }
        let ldif = "\(directory)/change.ldif"
        try write("dn: cn=\(group),ou=groups,\(baseDN)\nchangetype: modify\ndelete: memberUid\nmemberUid: \(user.name)\n",
                  to: ldif, mode: 0o600)
        try run("/usr/sbin/slapmodify", ["-f", configFile, "-l", ldif]).requireSuccess()
    }

    // MARK: - PAM

    /// Makes `pamDirectory`'s familycontrols-guardian and
    /// familycontrols-individual authenticate with the stack the shipped
    /// guardian service documents for directory users (pam_unix, then
    /// pam_sss keeping PAM_AUTHINFO_UNAVAIL) in place of `@include
    /// common-auth`: libpam reads an included file from /etc/pam.d even
    /// with a folder of the Guard's own, so the stack is written out.
    func useDirectoryStack(in pamDirectory: String) throws {
        let stack = try Self.documentedDirectoryStack().joined(separator: "\n")
        for service in ["familycontrols-guardian", "familycontrols-individual"] {
            let path = "\(pamDirectory)/\(service)"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            guard text.contains("\n@include common-auth\n") else { throw FixtureError("\(service) includes no common-auth") }
            try text.replacingOccurrences(of: "\n@include common-auth\n", with: "\n\(stack)\n")
                .write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    // MARK: - Clean-up

    /// Stops SSSD and slapd, restores nsswitch.conf, and removes what SSSD
    /// left and this directory's folder. Safe to call twice.
    func tearDown() {
        guard !tornDown else { return }
        tornDown = true
        if let nsswitch { try? Self.rewriteInPlace("/etc/nsswitch.conf", nsswitch) }
        stopSSSD()
        try? stopServer()
        removeSSSDState()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `body` with a started directory, torn down after, also on failure.
/// No Guard fixture of another test runs meanwhile (``NameServiceGate``).
func withDirectory<R>(_ body: (DirectoryServer) async throws -> R) async throws -> R {
    try await NameServiceGate.alone {
        try await tearingDown(try await offload { try DirectoryServer() }, with: { $0.tearDown() }, body)
    }
}
