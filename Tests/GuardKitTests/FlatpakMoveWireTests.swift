@testable import GuardKit
import SystemKit
import Testing
@testable import GuardFlatpak
@testable import GuardIdentity

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
