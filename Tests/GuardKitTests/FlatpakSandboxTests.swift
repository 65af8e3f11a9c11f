#if canImport(Glibc)
import Glibc
#endif
@testable import GuardKit
import LockEngine
import SystemKit
import TestSupport
import Testing
@testable import GuardIdentity

/// The filesystem half of reading a Flatpak identity, on folders standing in
/// for `/proc/PID` (with `root` in it) and for an installation: no sandbox,
/// no root needed.
@Suite struct FlatpakSandboxTests {
    static let commit = String(repeating: "ab", count: 32)

    private func write(_ path: String, _ text: String, mode: mode_t = 0o644) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        #expect(fd >= 0, "cannot create \(path)")
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private func makeDirectories(_ path: String) {
        var built = ""
        for part in path.split(separator: "/") {
            built += "/" + part
            _ = mkdir(built, 0o755)
        }
    }

    /// The sandbox's `.flatpak-info` as `make` leaves it at `PROC/root`.
    private func readInfo(in base: String, owner: UInt32 = getuid(),
                          _ make: (String) -> Void) -> Result<FlatpakInfo, FlatpakIdentityError> {
        makeDirectories(base + "/proc/root")
        make(base + "/proc/root/.flatpak-info")
        guard let proc = try? FileDescriptor.open(base + "/proc", O_RDONLY | O_DIRECTORY) else {
            Issue.record("cannot open the stand-in for /proc/PID")
            return .failure(.infoUnreadable("test setup"))
        }
        do { return .success(try FlatpakSandbox(proc: proc).info(owner: owner)) } catch { return .failure(error) }
    }

    @Test func readsFlatpakInfoThroughTheProcessRoot() throws {
        try withTemporaryDirectorySync { base in
            let result = readInfo(in: base) { write($0, genuineFlatpakInfo) }
            let info = try result.get()
            #expect(info.appID == "org.example.Demo")
        }
    }

    @Test func aLinkAFolderOrAFIFOInPlaceOfFlatpakInfoIsRefusedWithoutWaiting() throws {
        try withTemporaryDirectorySync { base in
            write(base + "/elsewhere", genuineFlatpakInfo)
            let link = readInfo(in: base + "/a") { _ = symlink(base + "/elsewhere", $0) }
            #expect(throws: FlatpakIdentityError.infoUnreadable("it is not a regular file")) { try link.get() }
            let folder = readInfo(in: base + "/b") { _ = mkdir($0, 0o755) }
            #expect(throws: FlatpakIdentityError.infoUnreadable("it is not a regular file")) { try folder.get() }
            // Opened for reading, a FIFO with no writer would block the Guard's thread.
            let fifo = readInfo(in: base + "/c") { _ = mkfifo($0, 0o644) }
            #expect(throws: FlatpakIdentityError.infoUnreadable("it is not a regular file")) { try fifo.get() }
        }
    }

    @Test func aFlatpakInfoOfAnotherUserIsNotRead() throws {
        try withTemporaryDirectorySync { base in
            let other = getuid() &+ 1
            let result = readInfo(in: base, owner: other) { write($0, genuineFlatpakInfo) }
            #expect(throws: FlatpakIdentityError.infoUnreadable("it belongs to uid \(getuid()), not to uid \(other)")) {
                try result.get()
            }
        }
    }

    @Test func aMissingOrOversizedFlatpakInfoIsRefused() throws {
        try withTemporaryDirectorySync { base in
            let missing = readInfo(in: base + "/a") { _ in }
            #expect(throws: FlatpakIdentityError.self) { try missing.get() }
            if case .failure(.infoUnreadable) = missing {} else { Issue.record("expected unreadable, got \(missing)") }
            let huge = readInfo(in: base + "/b") { write($0, genuineFlatpakInfo + String(repeating: "#\n", count: FlatpakSandbox.infoLimit)) }
            #expect(throws: FlatpakIdentityError.infoUnreadable("it is larger than \(FlatpakSandbox.infoLimit) bytes")) {
                try huge.get()
            }
        }
    }

    /// An installation at `base/flatpak` owned by the test's user, holding a
    /// deployment of `org.example.Demo` whose executable is `bin/demo`.
    private func installation(in base: String) -> (FlatpakInstallation, FlatpakInfo, files: String) {
        let root = base + "/flatpak"
        let files = root + "/app/org.example.Demo/x86_64/stable/\(Self.commit)/files"
        makeDirectories(files + "/bin")
        write(files + "/bin/demo", "#!/bin/sh\n", mode: 0o755)
        let installation = FlatpakInstallation(path: root, kind: .user(uid: getuid()))
        let info = FlatpakInfo(appID: "org.example.Demo", appPath: files, appCommit: Self.commit, instanceID: "7",
                               branch: "stable", arch: "x86_64")
        return (installation, info, files)
    }

    private func identity(_ path: String) -> FileIdentity {
        var raw = stat()
        #expect(stat(path, &raw) == 0, "cannot stat \(path)")
        return FileIdentity(FileStatus(raw))
    }

    @Test func theDeploymentsOwnExecutableIsThatApp() throws {
        try withTemporaryDirectorySync { base in
            let (installation, info, files) = installation(in: base)
            // A sandbox the child made with bubblewrap, running the deployment's
            // own file, is that app: it can do nothing the app could not.
            let deployment = try FlatpakSandbox.deployment(of: info, in: [installation], executable: "/app/bin/demo",
                                                           running: identity(files + "/bin/demo"))
            #expect(deployment.filesPath == files)
        }
    }

    @Test func aForgedSandboxRunningTheChildsOwnCodeIsRefused() throws {
        try withTemporaryDirectorySync { base in
            let (installation, info, files) = installation(in: base)
            // The child's program, mounted at /app/bin/demo in their own sandbox.
            write(base + "/demo", "#!/bin/sh\necho mine\n", mode: 0o755)
            #expect(throws: FlatpakIdentityError.executableNotInDeployment(executable: "/app/bin/demo",
                                                                          deployment: String(files.dropLast(6)))) {
                try FlatpakSandbox.deployment(of: info, in: [installation], executable: "/app/bin/demo",
                                              running: identity(base + "/demo"))
            }
            // Or run from outside /app altogether.
            #expect(throws: FlatpakIdentityError.executableNotInDeployment(executable: "/usr/bin/sh",
                                                                          deployment: String(files.dropLast(6)))) {
                try FlatpakSandbox.deployment(of: info, in: [installation], executable: "/usr/bin/sh",
                                              running: identity(files + "/bin/demo"))
            }
        }
    }

    @Test func aLinkInsideTheDeploymentIsNotFollowed() throws {
        try withTemporaryDirectorySync { base in
            let (installation, info, files) = installation(in: base)
            makeDirectories(base + "/mine")
            write(base + "/mine/demo", "#!/bin/sh\necho mine\n", mode: 0o755)
            _ = symlink(base + "/mine", files + "/libexec")
            #expect(throws: FlatpakIdentityError.executableNotInDeployment(executable: "/app/libexec/demo",
                                                                          deployment: String(files.dropLast(6)))) {
                try FlatpakSandbox.deployment(of: info, in: [installation], executable: "/app/libexec/demo",
                                              running: identity(base + "/mine/demo"))
            }
        }
    }

    @Test func aDeploymentOfAnotherOwnerOrWritableByOthersIsRefused() throws {
        try withTemporaryDirectorySync { base in
            let (mine, info, files) = installation(in: base)
            let someoneElses = FlatpakInstallation(path: mine.path, kind: .user(uid: getuid() &+ 1))
            #expect(throws: FlatpakIdentityError.deploymentUnusable(
                path: mine.path, "it belongs to uid \(getuid()), not to uid \(getuid() &+ 1)")) {
                try FlatpakSandbox.deployment(of: info, in: [someoneElses], executable: "/app/bin/demo",
                                              running: identity(files + "/bin/demo"))
            }
            _ = chmod(files, 0o777)
            #expect(throws: FlatpakIdentityError.deploymentUnusable(path: files, "others may write to it (mode 777)")) {
                try FlatpakSandbox.deployment(of: info, in: [mine], executable: "/app/bin/demo",
                                              running: identity(files + "/bin/demo"))
            }
        }
    }
}

/// The runtime's and the app's `files`, opened from the host's side for the
/// check of every mapping: the installation's owner's, closed to others.
@Suite struct FlatpakFilesTests {
    @Test func aDeploymentsFilesAreOpenedOnlyWhenTheInstallationOwnsThemAndOthersCannotWrite() throws {
        try withTemporaryDirectorySync { base in
            let installation = FlatpakInstallation(path: base + "/flatpak", kind: .user(uid: getuid()))
            let deployment = FlatpakDeployment(installation: installation, appID: "org.example.Demo", arch: "x86_64",
                                               branch: "stable", commit: FlatpakSandboxTests.commit)
            var built = ""
            for part in deployment.filesPath.split(separator: "/") {
                built += "/" + part
                _ = mkdir(built, 0o755)
            }
            let files = try FlatpakSandbox.files(of: deployment)
            #expect(files.identity == FileIdentity(device: files.status.device, inode: files.status.inode))
            chmod(deployment.filesPath, 0o777)
            #expect(throws: FlatpakIdentityError.deploymentUnusable(path: deployment.filesPath,
                                                                   "others may write to it (mode 777)")) {
                try FlatpakSandbox.files(of: deployment)
            }
            chmod(deployment.filesPath, 0o755)
            let other = FlatpakInstallation(path: installation.path, kind: .user(uid: getuid() &+ 1))
            var theirs = deployment
            theirs.installation = other
            #expect(throws: FlatpakIdentityError.deploymentUnusable(
                path: installation.path, "it belongs to uid \(getuid()), not to uid \(getuid() &+ 1)")) {
                try FlatpakSandbox.files(of: theirs)
            }
            _ = rmdir(deployment.filesPath)
            _ = symlink(base, deployment.filesPath)
            #expect(throws: FlatpakIdentityError.self) { try FlatpakSandbox.files(of: deployment) }
        }
    }
}
