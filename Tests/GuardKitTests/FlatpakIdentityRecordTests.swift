#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import Foundation
@testable import GuardKit
import LockEngine
import SystemKit
import Testing
@testable import GuardIdentity
@testable import GuardPolicy
@testable import GuardStore

/// What a Flatpak identity turns into once identified: the installations
/// recognised from the configuration, the deployment recorded in the store,
/// and the device and inode a memory map lists.
@Suite struct FlatpakIdentityRecordTests {
    let alice = UserAccount(name: "alice", uid: 1001, gid: 1001, home: "/home/alice", shell: "/bin/sh")

    let guardInstallation = FlatpakInstallation(path: "/var/lib/familycontrols-flatpak", kind: .system)

    @Test func theUsersOwnTheSystemAndTheGuardsInstallationAreRecognisedByDefault() {
        let found = FlatpakInstallations.of(GuardConfiguration(), for: alice)
        #expect(found.recognised == [FlatpakInstallation(path: "/home/alice/.local/share/flatpak", kind: .user(uid: 1001)),
                                     .system, guardInstallation])
        #expect(found.turnedOff.isEmpty)
    }

    @Test func anInstallationTurnedOffIsNamedWithItsKeyAndListedOnesAreRoots() {
        var configuration = GuardConfiguration()
        configuration.flatpakUserInstallations = false
        configuration.flatpakInstallations = ["/srv/flatpak", "/var/lib/flatpak"]
        let found = FlatpakInstallations.of(configuration, for: alice)
        #expect(found.recognised == [.system, FlatpakInstallation(path: "/srv/flatpak", kind: .system), guardInstallation])
        #expect(found.turnedOff(holding: "/home/alice/.local/share/flatpak/app/org.example.App/x86_64/stable/c/files")?.key
                == "UserInstallations")
        #expect(found.turnedOff(holding: "/home/alice/.local/share/flatpak-other/app") == nil)
        configuration.flatpakSystemInstallation = false
        #expect(FlatpakInstallations.of(configuration, for: alice).turnedOff(holding: "/var/lib/flatpak/app/x")?.key
                == "SystemInstallation")
    }

    @Test func aRecordedDeploymentReadsBackAsTheSameDeployment() throws {
        let commit = String(repeating: "ab", count: 32)
        let user = FlatpakDeployment(installation: .user(home: "/home/alice", uid: 1001), appID: "org.example.App",
                                     arch: "x86_64", branch: "stable", commit: commit)
        #expect(FlatpakDeployment(recordedAt: user.path, system: false, uid: 1001) == user)
        let system = FlatpakDeployment(installation: .system, appID: "org.example.App", arch: "aarch64",
                                       branch: "master", commit: commit)
        #expect(FlatpakDeployment(recordedAt: system.path, system: true, uid: 1001) == system)
        for bad in ["relative/app/a/b/c/d", "/var/lib/flatpak/runtime/a/b/c/d", "/app/a/b/c", "/x/app/a/b/c/d/", "/x/app/a/../c/d"] {
            #expect(FlatpakDeployment(recordedAt: bad, system: true, uid: 0) == nil, "\(bad)")
        }
    }

    @Test func anApprovalOfAFlatpakAppRecordsItsDeployment() throws {
        try withStore { store, _ throws in
        let deployment = FlatpakDeployment(installation: .user(home: "/home/alice", uid: 1001), appID: "org.example.Paint",
                                           arch: "x86_64", branch: "stable", commit: String(repeating: "0f", count: 32))
        var record = AuthorizationRecord(user: "alice", uid: 1001, appID: "org.example.Paint", member: .child,
                                         status: .approved, approvedBy: "bob", updatedAt: UnixTime(seconds: 1_700_000_000),
                                         appPath: FlatpakLockPlacement.folder(of: deployment),
                                         appIdentity: FileIdentity(device: 1, inode: 2), flatpak: deployment)
        try store.save(record)
        #expect(try store.authorization(user: "alice", appID: "org.example.Paint") == record)
        record.flatpak = FlatpakDeployment(installation: .system, appID: "org.example.Paint", arch: "x86_64",
                                           branch: "stable", commit: deployment.commit)
        try store.save(record)
        #expect(try store.authorization(user: "alice", appID: "org.example.Paint")?.flatpak?.installation == .system)
        #expect(!LockKeeper.needsLock(record))
        }
    }

    @Test func theDeviceAndInodeAMapListsAreWhatStatSays() throws {
        // Read to the end by hand: a /proc file has no size to read up to.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        // Every file-backed mapping whose file is still at its path: the test's
        // own program and its libraries at least.
        var compared = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, let inode = UInt64(fields[4]), inode != 0, fields[5].hasPrefix("/") else { continue }
            var status = stat()
            guard stat(String(fields[5]), &status) == 0, UInt64(status.st_ino) == inode else { continue }
            let device = fields[3].split(separator: ":")
            let major = try #require(UInt64(device[0], radix: 16)), minor = try #require(UInt64(device[1], radix: 16))
            let listed = MappedCode.listedIdentity(major: major, minor: minor, inode: inode)
            #expect(listed == FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)), "\(line)")
            compared += 1
        }
        #expect(compared > 0, "no file-backed mapping in \(maps.split(separator: "\n").count) lines")
    }
}
