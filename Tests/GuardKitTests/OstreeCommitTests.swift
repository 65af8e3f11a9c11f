@testable import GuardKit
import SystemKit
import Testing

/// A commit object as Flatpak 1.14.10 (libostree 2022.7, GLib's own GVariant
/// serializer) wrote it: `flatpak build-export --subject=second` of
/// `app/org.example.Parsed/x86_64/stable`, the second commit of the branch
/// (`flatpak repo --commits`: 23d0ef3b…, parent 8246837a…, 2026-12-01 21:52:55 UTC).
let genuineCommitObject: [UInt8] = {
    let hex = Array("78612e696e7374616c6c65642d73697a6500000000000000000000000000040000741200000000006f73747265652e636f6c6c656374696f6e2d62696e64696e67000000000000000000731a0000000078612e72656600006170702f6f72672e6578616d706c652e5061727365642f7838365f36342f737461626c65000073076f73747265652e7265662d62696e64696e670000000000006170702f6f72672e6578616d706c652e5061727365642f7838365f36342f737461626c6500250061731300000000000078612e6d6574616461746100000000005b4170706c69636174696f6e5d0a6e616d653d6f72672e6578616d706c652e5061727365640a72756e74696d653d6f72672e6578616d706c652e522f7838365f36342f737461626c650a636f6d6d616e643d780a0000730c78612e646f776e6c6f61642d73697a650000000000000000000000000000009200741123004c008000c200300153018246837a51f05bd7ae0d9bd54a882b88356f8b910705ad5ed73506248cfaca0c7365636f6e64004e616d653a206f72672e6578616d706c652e5061727365640a417263683a207838365f36340a4272616e63683a20737461626c650a4275696c7420776974683a20466c617470616b20312e31342e31300a00000000006b0f41b7b9e3d93c78cf57d5bc4a234caafaafdae90b780c0431b4fda4203db7dbf6e7a6446a0ef11b7cc167f3b603e585c7eeeeb675faa412d5ec73f62988eb0b6c54880002d80186017f017f015f01".utf8)
    return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}()

@Suite struct OstreeCommitTests {
    @Test func readsTheParentTheTimeAndTheRefBindingOfAGenuineCommit() throws {
        let commit = try OstreeCommit(parsing: genuineCommitObject)
        #expect(commit.parent == "8246837a51f05bd7ae0d9bd54a882b88356f8b910705ad5ed73506248cfaca0c")
        #expect(commit.timestamp == 1_796_161_975)
        #expect(commit.refBindings == ["app/org.example.Parsed/x86_64/stable"])
    }

    @Test func everyTruncationIsRefusedOrReadWithinItsBytes() {
        // A shorter object moves the framing offsets: most are refused, none may be read out of bounds.
        for length in 0..<genuineCommitObject.count {
            _ = try? OstreeCommit(parsing: Array(genuineCommitObject.prefix(length)))
        }
        #expect(throws: OstreeCommitError.self) { try OstreeCommit(parsing: []) }
        #expect(throws: OstreeCommitError.self) { try OstreeCommit(parsing: Array(genuineCommitObject.dropLast())) }
    }

    @Test func everyCorruptedByteIsRefusedOrReadWithinTheObject() {
        for index in genuineCommitObject.indices {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var bytes = genuineCommitObject
                bytes[index] ^= flip
                if let commit = try? OstreeCommit(parsing: bytes) {
                    #expect(commit.parent.map(OstreeCommit.isChecksum) ?? true)
                }
            }
        }
    }

    @Test func anObjectOverTheLimitIsRefusedUnread() {
        #expect(throws: OstreeCommitError.tooLarge(OstreeCommit.sizeLimit + 1)) {
            try OstreeCommit(parsing: [UInt8](repeating: 0, count: OstreeCommit.sizeLimit + 1))
        }
    }
}

@Suite struct FlatpakRemoteConfigurationTests {
    let config = """
        [core]
        repo_version=1
        mode=bare-user-only

        [remote "flathub"]
        gpg-verify=true
        url=https://dl.flathub.org/repo/
        collection-id=org.flathub.Stable

        [remote "fctest"]
        gpg-verify=false
        url=file:///srv/repo

        """

    @Test func readsTheNamedRemote() throws {
        let flathub = try FlatpakRemoteConfiguration.remote("flathub", in: Array(config.utf8))
        #expect(flathub == FlatpakRemoteConfiguration(name: "flathub", url: "https://dl.flathub.org/repo/", gpgVerify: true,
                                                      collectionID: "org.flathub.Stable"))
        let local = try FlatpakRemoteConfiguration.remote("fctest", in: Array(config.utf8))
        #expect(local.url == "file:///srv/repo")
        #expect(!local.gpgVerify)
    }

    @Test(arguments: [
        ("[remote \"a\"]\nurl=https://x/\nurl=https://y/\n", "line 3: url given twice in the remote's group"),
        ("[remote \"a\"]\nurl=ftp://x/\n", "the remote's url is missing or neither https://, http:// nor an absolute file:// path"),
        ("[remote \"a\"]\nurl=https://x/ --upload\n", "the remote's url is missing or neither https://, http:// nor an absolute file:// path"),
        ("[remote \"a\"]\nurl=https://x/\ngpg-verify=maybe\n", "the remote's gpg-verify is neither true nor false"),
        ("[remote \"a\"]\nurl=https://x/\u{01}\n", "line 2 of the repository's config holds a control character"),
        ("url=https://x/\n", "line 1: a key outside any group"),
        ("[remote \"a\"]\n[remote \"a\"]\n", "line 2: a group given twice"),
        ("[remote \"b\"]\nurl=https://x/\n", "the per-user installation has no remote of that name"),
        ("[remote \"a\"]\nurl=https://x/\ncollection-id=--x\n", "the remote's collection-id is not a dotted name"),
    ])
    func refusesHostileConfiguration(text: String, reason: String) {
        #expect(throws: FlatpakMoveError.remoteRefused(reason)) {
            try FlatpakRemoteConfiguration.remote("a", in: Array(text.utf8))
        }
    }

    @Test func refusesARemoteNameFlatpakWouldReadAsAnOption() {
        #expect(throws: FlatpakMoveError.remoteRefused("the remote's name is not a plain name")) {
            try FlatpakRemoteConfiguration.remote("--if-not-exists", in: Array(config.utf8))
        }
    }
}

@Suite struct FlatpakMoveWireTests {
    let commit = String(repeating: "ab", count: 32)

    private func request() -> FlatpakMoveRequest {
        FlatpakMoveRequest(uid: 1001, home: "/home/alice", appID: "org.example.App", arch: "x86_64", branch: "stable",
                           commit: commit, deployment: FileStatus(device: 2049, inode: 77, mode: 0, uid: 1001, gid: 0, linkCount: 0))
    }

    @Test func aRequestReadsBackAsSent() throws {
        let parsed = try FlatpakMoveWire.parseRequest(FlatpakMoveWire.request(request()))
        #expect(parsed.uid == 1001)
        #expect(parsed.home == "/home/alice")
        #expect(parsed.appID == "org.example.App")
        #expect(parsed.commit == commit)
        #expect(parsed.deployment.isSameFile(as: request().deployment))
    }

    @Test(arguments: [
        ("move\t1001\t/home/alice\n", "not a move request line"),
        ("move\t1001\t/home/a\u{1b}\torg.example.App\tx86_64\tstable\tc\t1\t2\n", "a control character in the line"),
        ("move\t1001\t/home/alice\torg.example.App\tx86_64\tstable\tc\t1\t2", "not one line of at most 8192 bytes"),
        ("move\t-1\t/home/alice\torg.example.App\tx86_64\tstable\tc\t1\t2\n", "not a move request line"),
    ])
    func aHostileRequestLineIsRefused(line: String, reason: String) {
        #expect(throws: FlatpakMoveError.invalidRequest(reason)) { try FlatpakMoveWire.parseRequest(Array(line.utf8)) }
    }

    @Test func aRefusalCarriesTheServicesReason() {
        let reply = FlatpakMoveWire.reply(.failure(.remoteRefused("the remote's url is missing")))
        #expect(throws: FlatpakMoveError.service("the app's remote was refused: the remote's url is missing")) {
            try FlatpakMoveWire.parseReply(reply, for: request())
        }
    }

    @Test func anApprovalReadsBackWithItsRuntime() throws {
        let runtime = FlatpakRuntimePin(name: "org.example.Platform/x86_64/24.08", commit: String(repeating: "ef", count: 32),
                                        timestamp: 1_764_000_100)
        let approval = FlatpakApproval(appID: "org.example.App", arch: "x86_64", branch: "stable", remote: "flathub",
                                       url: "https://dl.flathub.org/repo/", commit: commit, timestamp: 1_764_000_000,
                                       runtime: runtime)
        let parsed = try FlatpakMoveWire.parseReply(FlatpakMoveWire.reply(.success(approval)), for: request())
        #expect(parsed == approval)
    }

    @Test(arguments: [("", String(repeating: "ef", count: 32)),
                      ("org.example.Platform/x86_64", String(repeating: "ef", count: 32)),
                      ("org.example.Platform/x86_64/24.08", "not-a-checksum")])
    func anApprovalWithoutAValidRuntimeIsNotBelieved(name: String, runtimeCommit: String) {
        let approval = FlatpakApproval(appID: "org.example.App", arch: "x86_64", branch: "stable", remote: "flathub",
                                       url: "https://dl.flathub.org/repo/", commit: commit, timestamp: 1,
                                       runtime: FlatpakRuntimePin(name: name, commit: runtimeCommit, timestamp: 1))
        #expect(throws: FlatpakMoveError.service("the move service named no valid runtime")) {
            try FlatpakMoveWire.parseReply(FlatpakMoveWire.reply(.success(approval)), for: request())
        }
    }

    @Test func anApprovalOfAnotherCommitIsNotBelieved() {
        let other = FlatpakApproval(appID: "org.example.App", arch: "x86_64", branch: "stable", remote: "flathub",
                                    url: "https://dl.flathub.org/repo/", commit: String(repeating: "cd", count: 32), timestamp: 1)
        #expect(throws: FlatpakMoveError.service("the move service answered with no valid line")) {
            try FlatpakMoveWire.parseReply(FlatpakMoveWire.reply(.success(other)), for: request())
        }
    }
}
