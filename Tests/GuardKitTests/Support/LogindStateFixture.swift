import Foundation
import TestSupport

/// A folder standing in for /run/systemd (`sd/`) and /run/user (`user/`),
/// filled as systemd-logind fills them, and `logind-probe` run in a private
/// mount namespace (`unshare --mount --propagation private`) with the two
/// bind-mounted over the real ones: nothing outside that namespace sees them.
struct LogindStateFixture {
    let root: String

    /// `REALTIME=` of every session written: 2023-11-14T22:13:20Z.
    static let realtime: UInt64 = 1_700_000_000_000_000

    static let probePath = productPath("logind-probe")

    static var isAvailable: Bool {
        let files = FileManager.default
        return getuid() == 0 && files.isExecutableFile(atPath: "/usr/bin/unshare")
            && files.isExecutableFile(atPath: "/usr/bin/mount") && files.fileExists(atPath: "/run/systemd")
            && files.fileExists(atPath: "/run/user") && files.isExecutableFile(atPath: probePath)
    }

    /// A fixture whose `sd/` holds `folders` (logind's own, and `system`,
    /// which systemd as PID 1 makes), removed after `body`.
    static func with<R>(folders: [String] = ["system", "seats", "sessions", "users"],
                        _ body: (LogindStateFixture) async throws -> R) async throws -> R {
        try await withTemporaryDirectory { root in
            let fixture = LogindStateFixture(root: root)
            for folder in folders.map({ "sd/\($0)" }) + ["user"] {
                try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o755])
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
            return try await body(fixture)
        }
    }

    /// `relative`, written to a hidden temporary file and renamed into
    /// place, as logind's `fopen_temporary` and `rename` do (sd-login's
    /// monitor hears the rename, `IN_MOVED_TO`).
    func writeFile(_ relative: String, _ text: String) throws {
        let path = "\(root)/\(relative)"
        let folder = (path as NSString).deletingLastPathComponent
        let temporary = "\(folder)/.#\((path as NSString).lastPathComponent)\(UInt32.random(in: 0..<UInt32.max))"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: temporary)
        guard rename(temporary, path) == 0 else { throw FixtureError("rename \(temporary): errno \(errno)") }
    }

    /// /run/systemd/sessions/ID in the keys and order of logind's `session_save`.
    func writeSession(_ id: String, uid: UInt32, user: String, state: String, type: String, class sessionClass: String,
                      service: String, tty: String? = nil, display: String? = nil, leader: Int32) throws {
        var lines = ["# This is private data. Do not parse.", "UID=\(uid)", "USER=\(user)",
                     "ACTIVE=\(state == "active" ? 1 : 0)", "IS_DISPLAY=0", "STATE=\(state)", "REMOTE=0",
                     "LEADER_FD_SAVED=no", "TYPE=\(type)", "ORIGINAL_TYPE=\(type)", "CLASS=\(sessionClass)",
                     "SCOPE=session-\(id).scope", "FIFO=/run/systemd/sessions/\(id).ref"]
        if let tty { lines += ["TTY=\(tty)", "TTY_VALIDITY=from-pam"] }
        if let display { lines.append("DISPLAY=\(display)") }
        lines += ["SERVICE=\(service)", "LEADER=\(leader)", "AUDIT=\(leader)",
                  "REALTIME=\(Self.realtime)", "MONOTONIC=\(Self.realtime / 1000)"]
        try writeFile("sd/sessions/\(id)", lines.joined(separator: "\n") + "\n")
    }

    /// /run/systemd/users/UID, as logind's `user_save` writes it.
    func writeUser(uid: UInt32, name: String, sessions: [String]) throws {
        let lines = ["# This is private data. Do not parse.", "NAME=\(name)", "STATE=active", "STOPPING=no",
                     "RUNTIME=/run/user/\(uid)", "REALTIME=\(Self.realtime)", "MONOTONIC=\(Self.realtime / 1000)",
                     "SESSIONS=\(sessions.joined(separator: " "))", "ONLINE_SESSIONS=\(sessions.joined(separator: " "))"]
        try writeFile("sd/users/\(uid)", lines.joined(separator: "\n") + "\n")
    }

    /// /run/user/UID with listening Unix sockets named `sockets` in it.
    func makeRuntimeDirectory(uid: UInt32, sockets: [String]) throws {
        let directory = "\(root)/user/\(uid)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for name in sockets {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw FixtureError("socket: errno \(errno)") }
            defer { close(descriptor) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let path = Array("\(directory)/\(name)".utf8CString)
            guard path.count <= MemoryLayout.size(ofValue: address.sun_path) else { throw FixtureError("socket path too long") }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                path.withUnsafeBytes { raw.copyMemory(from: $0) }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { throw FixtureError("bind \(name): errno \(errno)") }
        }
    }

    /// The probe's command line: the namespace, the two bind mounts, the probe.
    private func command(_ arguments: [String]) -> [String] {
        ["--mount", "--propagation", "private", "/bin/sh", "-c",
         #"mount --bind "$0/sd" /run/systemd && mount --bind "$0/user" /run/user && exec "$@""#,
         root, Self.probePath] + arguments
    }

    func probe(_ arguments: [String]) async throws -> ProbeOutput {
        let result = try await run("/usr/bin/unshare", command(arguments))
        return ProbeOutput(status: result.status, output: result.standardOutput, error: result.standardError)
    }

    /// The probe started, to be finished by ``RunningProbe/finish()``.
    func startProbe(_ arguments: [String]) throws -> RunningProbe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = command(arguments)
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return RunningProbe(process: process, output: output, error: error)
    }

    static func waitFor(path: String, seconds: Double) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !FileManager.default.fileExists(atPath: path) {
            guard Date() < deadline else { throw FixtureError("\(path) did not appear in \(seconds) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct RunningProbe: @unchecked Sendable {
    let process: Process
    let output: Pipe
    let error: Pipe

    func finish() async throws -> ProbeOutput {
        try await offload {
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return ProbeOutput(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                               error: String(decoding: err, as: UTF8.self))
        }
    }
}

/// The fields of a session as `logind-probe` prints them.
struct ProbedSession: Equatable, CustomStringConvertible {
    var id: String
    var user: String
    var uid: UInt32
    var service: String
    var tty: String?
    var leader: Int32
    var runtime: String?
    var bus: String?
    var display: String?
    var wayland: String?

    var description: String {
        [id, user, String(uid), service, tty ?? "-", String(leader), runtime ?? "-", bus ?? "-", display ?? "-", wayland ?? "-"]
            .joined(separator: " ")
    }
}

struct ProbeOutput: Sendable {
    var status: Int32
    var output: String
    var error: String

    struct Header {
        var running = false
        var leaders = false
        var startTimes = false
    }

    /// The first line: `running BOOL leaders BOOL start-times BOOL`.
    var header: Header {
        let words = output.split(separator: "\n").first?.split(separator: " ").map(String.init) ?? []
        var header = Header()
        for index in stride(from: 0, to: words.count - 1, by: 2) {
            let value = words[index + 1] == "true"
            switch words[index] {
            case "running": header.running = value
            case "leaders": header.leaders = value
            case "start-times": header.startTimes = value
            default: break
            }
        }
        return header
    }

    /// The tab-separated session lines.
    var sessions: [(id: String, fields: ProbedSession, openedAt: UInt64)] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 11, let uid = UInt32(fields[2]), let leader = Int32(fields[5]),
                  let openedAt = UInt64(fields[10]) else { return nil }
            func optional(_ value: String) -> String? { value == "-" ? nil : value }
            return (fields[0], ProbedSession(id: fields[0], user: fields[1], uid: uid, service: fields[3], tty: optional(fields[4]),
                                             leader: leader, runtime: optional(fields[6]), bus: optional(fields[7]),
                                             display: optional(fields[8]), wayland: optional(fields[9])), openedAt)
        }
    }
}
