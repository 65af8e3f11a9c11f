#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import UpdateSignature
import LockEngine

/// Establishes which app a connected process is: the executable it runs
/// (`/proc/PID/exe`), which must be the very file at its path inside
/// `ROOT/APPID/` under one of the user's app roots, with `APPID.desktop`
/// declaring `X-FamilyControls=true`.
///
/// The process is pinned by its pidfd: every `/proc` read goes through one
/// directory descriptor, and the pidfd is checked alive after the reads, so a
/// pid recycled mid-request can never lend its identity to another process.
/// The app directory is opened here and held: what a guardian approves and
/// the Guard locks is that object, whatever the child does to its path later.
package struct AppIdentifier: Sendable {
    /// Environment variables that make a process load code that is not the app's.
    static let injectionVariables = ["LD_PRELOAD=", "LD_LIBRARY_PATH=", "LD_AUDIT="]
    /// The largest environment examined; a process with a larger one is refused.
    static let environmentLimit = 1 << 20

    /// What reads the files a child wrote: desktop entries, `.flatpak-info`, memory maps.
    package var inspector: Inspector

    package init(inspector: Inspector = .standard) {
        self.inspector = inspector
    }

    /// Identifies process `pid` (pinned by `pidfd` when there is one), which
    /// connected as `uid`, against the app roots in `roots`, or, in a
    /// sandbox of its own, against the Flatpak installations in `flatpak`.
    /// - Returns: the app, and its directory held open.
    package func identify(pid: Int32, pidfd: CInt?, uid: UInt32, roots: [String],
                          flatpak: FlatpakInstallations = .none) throws(IdentityError) -> (AppIdentity, OpenedDirectory) {
        guard let proc = try? FileDescriptor.open("/proc/\(pid)", O_DIRECTORY | O_RDONLY) else {
            throw .processGone(pid: pid)
        }
        try requireAlive(pid: pid, pidfd: pidfd)

        guard let executable = readLink(at: proc, "exe"), let running = Self.status(at: proc, "exe") else {
            // Still alive, it runs a file the Guard may not follow to (a Guard without CAP_SYS_PTRACE).
            try requireAlive(pid: pid, pidfd: pidfd)
            throw pidfd == nil ? .processGone(pid: pid) : .notExaminable(pid: pid, "its executable could not be read")
        }
        let status = Self.readFile(at: proc, "status", limit: 64 << 10)
        let environment = Self.readFile(at: proc, "environ", limit: Self.environmentLimit + 1)
        let namespace = Self.status(at: proc, "ns/user")
        try requireAlive(pid: pid, pidfd: pidfd)
        // Alive after the reads, so what could not be read the Guard may not
        // read: an empty environment would pass the checks below unseen.
        guard let status else { throw .notExaminable(pid: pid, "its status could not be read") }
        guard let environment else { throw .notExaminable(pid: pid, "its environment could not be read") }
        guard environment.count <= Self.environmentLimit else {
            throw .notExaminable(pid: pid, "its environment is larger than the Guard examines")
        }

        // The process must still be the one that connected: same effective user.
        guard Self.effectiveUID(in: status) == uid else { throw .processGone(pid: pid) }
        if let tracer = Self.tracerPID(in: status), tracer != 0 { throw .traced(pid: pid) }
        for entry in environment.split(separator: 0) {
            for variable in Self.injectionVariables where entry.starts(with: variable.utf8) && entry.count > variable.utf8.count {
                throw .injectedLibraries(variable: String(variable.dropLast()))
            }
        }
        // In a user namespace of its own the child may mount anything over
        // anything, so paths it sees say nothing; outside one only root can.
        // There only a Flatpak app is identified, from the host's side.
        guard let namespace, let own = Self.ownUserNamespace else { throw .foreignNamespace(pid: pid) }
        guard namespace.isSameFile(as: own) else {
            let found = try identifySandboxed(proc: proc, pid: pid, uid: uid, executable: executable,
                                              running: FileIdentity(running), flatpak: flatpak)
            try requireAlive(pid: pid, pidfd: pidfd)
            return found
        }
        let (identity, directory) = try locate(executable: executable, running: FileIdentity(running), uid: uid, roots: roots)
        if let problem = try MappedCode(proc: proc, pid: pid, inspector: inspector).examined(executable: FileIdentity(running), app: directory) {
            throw .foreignCode(pid: pid, problem)
        }
        try requireAlive(pid: pid, pidfd: pidfd)
        return (identity, directory)
    }

    /// Finds the app directory holding `executable`, whose file must be the
    /// one `running` (device and inode), and checks the directory and its
    /// desktop entry.
    package func locate(executable: String, running: FileIdentity, uid: UInt32,
                        roots: [String]) throws(IdentityError) -> (AppIdentity, OpenedDirectory) {
        guard !executable.hasSuffix(" (deleted)") else {
            throw .notInAppDirectory(executable: executable, roots: roots)
        }
        // Roots are compared as configured, never through symlinks: a child who points
        // ~/Applications somewhere else must not make that place a managed root.
        for root in roots {
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard executable.hasPrefix(prefix) else { continue }
            let inside = executable.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard inside.count >= 2, let first = inside.first else { continue }
            let appID = String(first)
            guard AppIdentity.isValidAppID(appID) else { throw .invalidAppID(appID) }
            let path = prefix + appID
            let directory: OpenedDirectory
            do {
                directory = try OpenedDirectory.open(path)
            } catch {
                throw .directoryUnusable(path: path, "\(error)")
            }
            if let problem = directory.ownershipProblem(uid: uid) { throw .directoryUnusable(path: path, problem) }
            let relative = inside.dropFirst().joined(separator: "/")
            guard let file = directory.status(of: relative), FileIdentity(file) == running else {
                throw .notInAppDirectory(executable: executable, roots: roots)
            }
            let entryPath = "\(path)/\(appID).desktop"
            let entry = try inspectedEntry(directory, appID, path: entryPath)
            guard entry.declaresFamilyControls else { throw .missingCapability(path: entryPath) }
            guard let program = entry.program, Self.relativeProgram(program, in: path) == relative else {
                throw .execMismatch(path: entryPath, executable: executable)
            }
            let required: SessionConsequence?
            do throws(MonitorRequirementError) {
                required = try MonitorRequirement.declared(in: entry)
            } catch {
                throw .invalidMonitorRequirement(path: entryPath, error)
            }
            let identity = AppIdentity(appID: appID, displayName: entry.name ?? appID, directory: path,
                                       executable: executable, directoryIdentity: directory.identity,
                                       updateKey: entry.updateKey, version: entry.comparableVersion,
                                       monitor: entry.monitor, monitorRequired: required)
            return (identity, directory)
        }
        throw .notInAppDirectory(executable: executable, roots: roots)
    }

    private func requireAlive(pid: Int32, pidfd: CInt?) throws(IdentityError) {
        guard let pidfd else { return }
        guard ProcessHandle.isAlive(pidfd: pidfd) else { throw .processGone(pid: pid) }
    }

    /// The Guard's own user namespace.
    private static let ownUserNamespace: FileStatus? = {
        var raw = stat()
        return stat("/proc/self/ns/user", &raw) == 0 ? FileStatus(raw) : nil
    }()

    /// `TracerPid:` from `/proc/PID/status`.
    static func tracerPID(in status: [UInt8]) -> Int? {
        statusField("TracerPid:", in: status).flatMap { Int($0) }
    }

    /// The effective user ID, the second number of `Uid:` in `/proc/PID/status`.
    static func effectiveUID(in status: [UInt8]) -> UInt32? {
        let ids = statusField("Uid:", in: status)?.split(whereSeparator: { $0 == " " || $0 == "\t" }) ?? []
        return ids.count >= 2 ? UInt32(ids[1]) : nil
    }

    private static func statusField(_ name: String, in status: [UInt8]) -> String? {
        let text = String(decoding: status, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return line.dropFirst(name.count).trimmingWhitespace()
        }
        return nil
    }

    /// `Exec=`'s program as a path relative to the app directory, or nil when
    /// it names something outside it. Never resolved through links: `Exec=`
    /// must name the program file itself.
    private static func relativeProgram(_ program: String, in directory: String) -> String? {
        let relative: Substring
        if program.hasPrefix("/") {
            guard program.hasPrefix(directory + "/") else { return nil }
            relative = program.dropFirst(directory.count + 1)
        } else {
            relative = program[...]
        }
        var parts: [Substring] = []
        for part in relative.split(separator: "/") where part != "." {
            if part == ".." {
                guard parts.popLast() != nil else { return nil }
            } else {
                parts.append(part)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// A desktop entry: a regular file in the app directory itself, not a
    /// link, at most 64 KiB, valid UTF-8.
    /// `APPID.desktop` in `directory` (at `path`), inspected.
    func inspectedEntry(_ directory: OpenedDirectory, _ appID: String, path: String) throws(IdentityError) -> DesktopEntry {
        let found: DesktopEntry?
        do throws(InspectionFailure) {
            found = try Self.desktopEntry(directory, "\(appID).desktop", inspector: inspector)
        } catch {
            switch error {
            case .refused(let problem): throw .unreadableDesktopEntry(path: path, problem)
            case .failed(let problem): throw .inspectorFailed(what: "the app's desktop entry \(path)", problem: problem)
            }
        }
        guard let found else { throw .missingDesktopEntry(path: path) }
        return found
    }

    /// The desktop entry `name` in `directory`, opened here and read by the
    /// inspector; nil when there is none to read: not a regular file of at
    /// most 64 KiB, or replaced while being opened.
    package static func desktopEntry(_ directory: OpenedDirectory, _ name: String,
                             inspector: Inspector = .standard) throws(InspectionFailure) -> DesktopEntry? {
        guard let status = directory.status(of: name), status.type == .regular,
              let fd = directory.openFile(name) else { return nil }
        guard let opened = try? fd.status(), opened.isSameFile(as: status), let size = try? fd.byteCount(), size <= 64 << 10 else {
            return nil
        }
        return try inspector.desktopEntry(fd)
    }

    private func readLink(at directory: FileDescriptor, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory.rawValue, name, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The status of what `name` leads to (a `/proc` magic link is followed
    /// to the very file or namespace it stands for).
    static func status(at directory: FileDescriptor, _ name: String) -> FileStatus? {
        var raw = stat()
        guard fstatat(directory.rawValue, name, &raw, 0) == 0 else { return nil }
        return FileStatus(raw)
    }

    static func readFile(at directory: FileDescriptor, _ name: String, limit: Int) -> [UInt8]? {
        let fd = openat(directory.rawValue, name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        return readAll(FileDescriptor(taking: fd), limit: limit)
    }

    private static func readAll(_ fd: FileDescriptor, limit: Int) -> [UInt8]? {
        try? fd.readAll(limit: limit)
    }
}
