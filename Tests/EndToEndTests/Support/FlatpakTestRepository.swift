import Foundation
import Synchronization
import TestSupport

/// A local, offline Flatpak repository holding a test runtime made from the
/// host's own binaries and libraries and a tiny test app, as Flatpak's own
/// `tests/make-test-runtime.sh` and `make-test-app.sh` do. Each test gets its
/// own copy; the runtime is built once per test run.
final class FlatpakTestRepository: Sendable {
    static let appID = "org.familycontrols.FlatpakTest"
    static let runtimeID = "org.familycontrols.TestRuntime"
    static let branch = "master"
    /// `runtime/ID/ARCH/BRANCH`.
    static var runtimeRef: String { "runtime/\(runtimeID)/\(architecture)/\(branch)" }
    /// The app's command, a shell script run by the runtime's `/bin/sh`.
    static let command = "fc-test-app"
    /// The demo app, the real app library inside (`/app/bin/familycontrols-demo`),
    /// run with `flatpak run --command=familycontrols-demo`: the runtime holds the
    /// libraries it links, the Swift runtime's among them.
    static let demo = "familycontrols-demo"

    /// The folder holding `repo/` and the app's build folder; readable by every user.
    let directory: String
    var repository: String { "\(directory)/repo" }
    private var build: String { "\(directory)/build" }

    /// Copies the cached runtime repository into a fresh folder and publishes
    /// version 1 of the app.
    init() throws {
        let runtime = try Self.runtimeRepository()
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        try run("/bin/cp", ["-a", runtime, repository]).requireSuccess()
        try publish(version: 1)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Builds version `version` of the app and exports it as the branch's new
    /// commit (an update for whoever installed an earlier one).
    /// - Returns: the new commit.
    @discardableResult
    func publish(version: Int, signedWith key: FlatpakSigningKey? = nil, monitor: String? = nil) throws -> String {
        let fm = FileManager.default
        try? fm.removeItem(atPath: build)
        try fm.createDirectory(atPath: "\(build)/files/bin", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(build)/files/share/applications", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(build)/var", withIntermediateDirectories: true)
        // What `flatpak build-init` writes; build-init itself wants the runtime
        // installed for the builder, which this repository does not need.
        let runtime = "\(Self.runtimeID)/\(Self.architecture)/\(Self.branch)"
        try """
            [Application]
            name=\(Self.appID)
            runtime=\(runtime)
            sdk=\(runtime)

            """.write(toFile: "\(build)/metadata", atomically: true, encoding: .utf8)
        // Prints its version, then stays running until it is killed.
        let program = "\(build)/files/bin/\(Self.command)"
        try writeProgram("#!/bin/sh\necho \"\(Self.appID) version \(version)\"\nexec sleep 3600\n", to: program)
        try copyProgram(productPath(Self.demo), to: "\(build)/files/bin/\(Self.demo)")
        try """
            [Desktop Entry]
            Type=Application
            Name=FamilyControls Flatpak test app
            Exec=\(Self.command)
            X-FamilyControls=true
            \(monitor.map { "X-FamilyControls-Monitor=\($0)" } ?? "")

            """.write(toFile: "\(build)/files/share/applications/\(Self.appID).desktop", atomically: true, encoding: .utf8)
        try run("/usr/bin/flatpak", ["build-finish", build, "--command=\(Self.command)",
                                     "--filesystem=/run/familycontrols:ro"]).requireSuccess()
        let signing = key?.arguments ?? []
        try run("/usr/bin/flatpak", ["build-export"] + signing + [repository, build, Self.branch]).requireSuccess()
        try run("/usr/bin/flatpak", ["build-update-repo"] + signing + [repository]).requireSuccess()
        return try commit()
    }

    /// Signs what the repository holds (the app's and the runtime's
    /// commits, and the summary) with `key`, as a remote that verifies GPG wants.
    func sign(with key: FlatpakSigningKey) throws {
        try run("/usr/bin/flatpak", ["build-sign"] + key.arguments + [repository, Self.appID, Self.branch]).requireSuccess()
        try run("/usr/bin/flatpak", ["build-sign", "--runtime"] + key.arguments + [repository, Self.runtimeID, Self.branch])
            .requireSuccess()
        try run("/usr/bin/flatpak", ["build-update-repo"] + key.arguments + [repository]).requireSuccess()
    }

    /// The commit the repository's branch of the app points at now.
    func commit() throws -> String {
        let ref = "\(repository)/refs/heads/app/\(Self.appID)/\(Self.architecture)/\(Self.branch)"
        return try String(contentsOfFile: ref, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The commit the repository's branch of the runtime `id` points at now.
    func runtimeCommit(id: String = runtimeID) throws -> String {
        let ref = "\(repository)/refs/heads/runtime/\(id)/\(Self.architecture)/\(Self.branch)"
        return try String(contentsOfFile: ref, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Exports a new commit of the runtime on top of the current one whose
    /// `/usr/bin/sh` is a script of someone else's (it writes `marker` to
    /// its standard error, then runs the real shell): what a child serving
    /// a remote of their own publishes; under another `id`, a runtime of
    /// the child's own. - Returns: the new commit.
    @discardableResult
    func publishRuntime(marker: String, id: String = runtimeID) throws -> String {
        let source = try Self.runtimeBuildFolder()
        let copy = "\(directory)/runtime-build"
        try? FileManager.default.removeItem(atPath: copy)
        try run("/bin/cp", ["-a", source, copy]).requireSuccess()
        try run("/bin/mv", ["\(copy)/usr/bin/sh", "\(copy)/usr/bin/sh.real"]).requireSuccess()
        try writeProgram("#!/usr/bin/sh.real\necho \(marker) >&2\nexec /usr/bin/sh.real \"$@\"\n", to: "\(copy)/usr/bin/sh")
        try "[Runtime]\nname=\(id)\n".write(toFile: "\(copy)/metadata", atomically: true, encoding: .utf8)
        try run("/usr/bin/flatpak", ["build-export", "--runtime", repository, copy, Self.branch]).requireSuccess()
        try run("/usr/bin/flatpak", ["build-update-repo", repository]).requireSuccess()
        return try runtimeCommit(id: id)
    }

    /// Flatpak's name for this machine's architecture (`flatpak --default-arch`).
    static let architecture: String = {
        let answer = (try? run("/usr/bin/flatpak", ["--default-arch"]))?.standardOutput ?? ""
        let arch = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        return arch.isEmpty ? "x86_64" : arch
    }()

    // MARK: - The runtime, once per test run

    private static let cachedRuntime = Mutex<String?>(nil)

    /// A repository holding only the test runtime, built on first use and
    /// removed when the test process exits.
    /// The runtime's build folder (beside the cached repository).
    private static func runtimeBuildFolder() throws -> String {
        URL(fileURLWithPath: try runtimeRepository()).deletingLastPathComponent().path + "/runtime"
    }

    private static func runtimeRepository() throws -> String {
        try cachedRuntime.withLock { cached in
            if let cached { return cached }
            let folder = try makeTemporaryDirectory()
            runtimeFolderToRemove.set(folder)
            atexit { if let folder = runtimeFolderToRemove.get() { _ = try? FileManager.default.removeItem(atPath: folder) } }
            let repository = "\(folder)/repo"
            try buildRuntime(in: "\(folder)/runtime")
            try run("/usr/bin/flatpak", ["build-export", "--runtime", repository, "\(folder)/runtime", branch])
                .requireSuccess()
            cached = repository
            return repository
        }
    }

    /// Programs the runtime carries: a shell for the app's script and what it runs.
    private static let programs = ["sh", "bash", "sleep", "cat", "ls", "readlink", "ldconfig"]

    /// Lays out a runtime: `metadata`, `usr/` with the programs and every
    /// library they link (and `libgcc_s.so.1`, which glibc loads at thread
    /// exit), and the empty `files/` that `build-export --runtime` wants.
    private static func buildRuntime(in runtime: String) throws {
        let fm = FileManager.default
        for folder in ["files", "usr/bin", "usr/lib"] {
            try fm.createDirectory(atPath: "\(runtime)/\(folder)", withIntermediateDirectories: true)
        }
        try fm.createSymbolicLink(atPath: "\(runtime)/usr/lib64", withDestinationPath: "lib")
        try "[Runtime]\nname=\(runtimeID)\n".write(toFile: "\(runtime)/metadata", atomically: true, encoding: .utf8)
        var libraries: Set<String> = []
        for name in programs {
            guard let path = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map({ "\($0)/\(name)" })
                .first(where: fm.isExecutableFile(atPath:)) else { throw FixtureError("no \(name) on this machine") }
            try run("/bin/cp", ["-L", path, "\(runtime)/usr/bin/\(name)"]).requireSuccess()
            libraries.formUnion(try linkedLibraries(of: path))
        }
        libraries.formUnion(try linkedLibraries(of: productPath(demo)))
        libraries.insert(try libgcc())
        for library in libraries {
            let name = URL(fileURLWithPath: library).lastPathComponent
            try run("/bin/cp", ["-L", library, "\(runtime)/usr/lib/\(name)"]).requireSuccess()
        }
    }

    /// The absolute paths `ldd` lists for `program` (the dynamic loader among them).
    private static func linkedLibraries(of program: String) throws -> [String] {
        let listed = try run("/usr/bin/ldd", [program])
        guard listed.succeeded else { return [] }   // a static program links nothing
        return listed.standardOutput.split(separator: "\n").compactMap { line in
            let target = line.components(separatedBy: "=>").last ?? ""
            let path = target.trimmingCharacters(in: .whitespaces).components(separatedBy: " ").first ?? ""
            return path.hasPrefix("/") ? path : nil
        }
    }

    private static func libgcc() throws -> String {
        let cache = try run("/sbin/ldconfig", ["-p"]).standardOutput
        let line = cache.split(separator: "\n").first { $0.contains("libgcc_s.so.1") && $0.contains("x86-64") }
            ?? cache.split(separator: "\n").first { $0.contains("libgcc_s.so.1") }
        guard let path = line?.components(separatedBy: "=> ").last else {
            throw FixtureError("ldconfig -p lists no libgcc_s.so.1 (Debian package libgcc-s1)")
        }
        return path.trimmingCharacters(in: .whitespaces)
    }
}

private let runtimeFolderToRemove = LockedBox<String?>(nil)

/// A GPG key made for one test (no passphrase), in a home of its own.
struct FlatpakSigningKey: Sendable {
    let home: String
    let keyID: String
    /// The public key, for `flatpak remote-add --gpg-import=`; readable by every user.
    let publicKey: String

    var arguments: [String] { ["--gpg-sign=\(keyID)", "--gpg-homedir=\(home)"] }

    init(in directory: String) throws {
        home = "\(directory)/gnupg"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        chmod(home, 0o700)
        try run("/usr/bin/gpg", ["--homedir", home, "--batch", "--passphrase", "", "--quick-gen-key",
                                 "FamilyControls test <test@example.invalid>", "rsa2048", "sign", "never"]).requireSuccess()
        let listed = try run("/usr/bin/gpg", ["--homedir", home, "--batch", "--with-colons", "--list-keys"]).requireSuccess()
        guard let fingerprint = listed.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") })?
            .split(separator: ":", omittingEmptySubsequences: false).dropFirst(9).first else {
            throw FixtureError("gpg listed no fingerprint for the new key")
        }
        keyID = String(fingerprint)
        publicKey = "\(directory)/public.gpg"
        try run("/usr/bin/gpg", ["--homedir", home, "--batch", "--yes", "--output", publicKey, "--export", keyID]).requireSuccess()
        chmod(publicKey, 0o644)
    }

    /// Ends the gpg-agent the key's home started.
    func stop() {
        _ = try? run("/usr/bin/gpgconf", ["--homedir", home, "--kill", "gpg-agent"])
    }
}

/// Whether the Flatpak tests can run: root, useradd, and Debian's flatpak
/// and dbus-daemon.
var canRunFlatpak: Bool {
    canManageUsers && FileManager.default.isExecutableFile(atPath: "/usr/bin/flatpak")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session")
}
