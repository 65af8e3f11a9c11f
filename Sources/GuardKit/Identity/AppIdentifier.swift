import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Establishes which app a connected process is: the executable it runs
/// (`/proc/PID/exe`), which must sit in `ROOT/APPID/` under one of the user's
/// app roots, with `APPID.desktop` declaring `X-FamilyControls=true`.
///
/// The process is pinned by its pidfd: every `/proc` read goes through one
/// directory descriptor, and the pidfd is checked alive after the reads, so a
/// pid recycled mid-request can never lend its identity to another process.
package struct AppIdentifier: Sendable {
    /// Environment variables that make a process load code that is not the app's.
    static let injectionVariables = ["LD_PRELOAD=", "LD_LIBRARY_PATH=", "LD_AUDIT="]

    package init() {}

    /// Identifies process `pid` (pinned by `pidfd` when there is one), which
    /// connected as `uid`, against the app roots in `roots`.
    package func identify(pid: Int32, pidfd: CInt?, uid: UInt32, roots: [String]) throws(IdentityError) -> AppIdentity {
        guard let proc = try? FileDescriptor.open("/proc/\(pid)", O_DIRECTORY | O_RDONLY) else {
            throw .processGone(pid: pid)
        }
        try requireAlive(pid: pid, pidfd: pidfd)

        guard let executable = readLink(at: proc, "exe") else { throw .processGone(pid: pid) }
        let status = readFile(at: proc, "status", limit: 64 << 10) ?? Data()
        let environment = readFile(at: proc, "environ", limit: 1 << 20) ?? Data()
        try requireAlive(pid: pid, pidfd: pidfd)

        // The process must still be the one that connected: same effective user.
        guard Self.effectiveUID(in: status) == uid else { throw .processGone(pid: pid) }
        if let tracer = Self.tracerPID(in: status), tracer != 0 { throw .traced(pid: pid) }
        for entry in environment.split(separator: 0) {
            for variable in Self.injectionVariables where entry.starts(with: variable.utf8) && entry.count > variable.utf8.count {
                throw .injectedLibraries(variable: String(variable.dropLast()))
            }
        }
        return try locate(executable: executable, roots: roots)
    }

    /// Finds the app directory holding `executable` and checks its desktop entry.
    package func locate(executable: String, roots: [String]) throws(IdentityError) -> AppIdentity {
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
            let directory = prefix + appID
            let entryPath = "\(directory)/\(appID).desktop"
            guard let text = Self.readSmallFile(entryPath) else { throw .missingDesktopEntry(path: entryPath) }
            let entry = DesktopEntry(parsing: text)
            guard entry.declaresFamilyControls else { throw .missingCapability(path: entryPath) }
            guard let program = entry.program, Self.resolve(program, in: directory) == executable else {
                throw .execMismatch(path: entryPath, executable: executable)
            }
            return AppIdentity(appID: appID, displayName: entry.name ?? appID, directory: directory, executable: executable)
        }
        throw .notInAppDirectory(executable: executable, roots: roots)
    }

    private func requireAlive(pid: Int32, pidfd: CInt?) throws(IdentityError) {
        guard let pidfd else { return }
        guard ProcessHandle.isAlive(pidfd: pidfd) else { throw .processGone(pid: pid) }
    }

    /// `TracerPid:` from `/proc/PID/status`.
    static func tracerPID(in status: Data) -> Int? {
        statusField("TracerPid:", in: status).flatMap { Int($0) }
    }

    /// The effective user ID, the second number of `Uid:` in `/proc/PID/status`.
    static func effectiveUID(in status: Data) -> UInt32? {
        let ids = statusField("Uid:", in: status)?.split(whereSeparator: { $0 == " " || $0 == "\t" }) ?? []
        return ids.count >= 2 ? UInt32(ids[1]) : nil
    }

    private static func statusField(_ name: String, in status: Data) -> String? {
        let text = String(decoding: status, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return line.dropFirst(name.count).trimmingWhitespace()
        }
        return nil
    }

    /// `Exec=`'s program as a path: absolute as given, relative to the app directory otherwise.
    private static func resolve(_ program: String, in directory: String) -> String {
        let path = program.hasPrefix("/") ? program : "\(directory)/\(program)"
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    /// A desktop entry: a regular file, not through a final symlink, at most 64 KiB.
    private static func readSmallFile(_ path: String) -> String? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else { return nil }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 64 << 10 else { return nil }
        return readAll(fd, limit: 64 << 10).flatMap { String(validating: $0, as: UTF8.self) }
    }

    private func readLink(at directory: FileDescriptor, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory.rawValue, name, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func readFile(at directory: FileDescriptor, _ name: String, limit: Int) -> Data? {
        let fd = openat(directory.rawValue, name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        return Self.readAll(FileDescriptor(taking: fd), limit: limit)
    }

    private static func readAll(_ fd: FileDescriptor, limit: Int) -> Data? {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while data.count < limit {
            let count = chunk.withUnsafeMutableBytes { try? fd.read(into: $0) }
            guard let count else { return nil }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<min(count, limit - data.count)])
        }
        return data
    }
}
