import FamilyConfiguration
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

    /// The call as bytes: `parameters` (JSON text) for `method`, ended by NUL.
    private func call(_ method: String, _ parameters: String) -> [UInt8] {
        Array("{\"method\":\"\(method)\",\"parameters\":\(parameters)}".utf8) + [0]
    }

    private var validParameters: String {
        #"{"uid":1001,"home":"/home/alice","appID":"org.example.App","arch":"x86_64","branch":"stable","commit":"c","device":1,"inode":2,"trusted":[]}"#
    }

    @Test func aCallFromTheInterfaceReadsBack() throws {
        let parsed = try FlatpakMoveWire.parseRequest(call("org.familycontrols.mover.MoveApp", validParameters))
        #expect(parsed.uid == 1001 && parsed.deployment.device == 1 && parsed.deployment.inode == 2)
    }

    @Test(arguments: [
        ("org.familycontrols.mover.MoveApp", #"{"uid":1001}"#, "home"),
        ("org.familycontrols.mover.Recover", "{}", "is not a method of org.familycontrols.mover"),
        ("org.familycontrols.mover.MoveApp", #"{"uid":-1,"home":"/h","appID":"a","arch":"x","branch":"b","commit":"c","device":1,"inode":2,"trusted":[]}"#,
         "is not a user's"),
        ("org.familycontrols.mover.MoveApp", #"{"uid":1,"home":"/h","appID":"a","arch":"x","branch":"b","commit":"c","device":1,"inode":2,"trusted":[],"extra":1}"#,
         "extra"),
        ("org.familycontrols.mover.MoveApp", #"{"uid":"1001","home":"/h","appID":"a","arch":"x","branch":"b","commit":"c","device":1,"inode":2,"trusted":[]}"#,
         "uid"),
        ("org.familycontrols.mover.MoveApp", #"{"uid":1,"home":"/h","appID":"a","arch":"x","branch":"b","commit":"c","device":1,"inode":2,"trusted":[{"name":"flathub","url":"https://dl.flathub.org/repo/","fingerprints":["XYZ"]}]}"#,
         "a trusted remote"),
    ])
    func aHostileCallIsRefusedSayingWhy(method: String, parameters: String, reason: String) {
        do {
            _ = try FlatpakMoveWire.parseRequest(call(method, parameters))
            Issue.record("accepted \(parameters)")
        } catch {
            guard case .invalidRequest(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains(reason), "\(message)")
        }
    }

    @Test(arguments: [Array("move\t1001\t/home/alice\n".utf8), [UInt8](repeating: 0x20, count: 70_000) + [0], [], [0],
                      Array(#"{"method":"org.familycontrols.mover.MoveApp","parameters":{}}"#.utf8)])
    func bytesThatAreNotOneCallAreRefused(bytes: [UInt8]) {
        #expect(throws: FlatpakMoveError.self) { try FlatpakMoveWire.parseRequest(bytes) }
    }

    @Test func aCallWithItsTrustedRemotesReadsBack() throws {
        var sent = request()
        sent.trusted = [try FlatpakTrustedRemote.parse("flathub https://dl.flathub.org/repo/ " + String(repeating: "A", count: 40)).get()]
        let parsed = try FlatpakMoveWire.parseRequest(FlatpakMoveWire.request(sent))
        #expect(parsed.trusted == sent.trusted)
    }

    @Test func anInodeBeyondSixtyThreeBitsReadsBack() throws {
        var sent = request()
        sent.deployment = FileStatus(device: 2049, inode: UInt64.max - 3, mode: 0, uid: 1001, gid: 0, linkCount: 0)
        #expect(try FlatpakMoveWire.parseRequest(FlatpakMoveWire.request(sent)).deployment.inode == UInt64.max - 3)
    }

    @Test func anInvalidCallIsAnsweredWithTheInterfacesErrorAndTheReason() {
        let reply = FlatpakMoveWire.reply(.failure(.invalidRequest("not a Varlink call")))
        #expect(throws: FlatpakMoveError.service("the move service refused the call: not a Varlink call")) {
            try FlatpakMoveWire.parseReply(reply, for: request())
        }
    }

    @Test(arguments: [Array("approved\tflathub\n".utf8), Array(#"{"error":"org.example.Other","parameters":{}}"#.utf8) + [0],
                      Array(#"{"parameters":{"remote":"flathub"}}"#.utf8) + [0]])
    func aReplyOutOfTheInterfaceIsNotBelieved(bytes: [UInt8]) {
        #expect(throws: FlatpakMoveError.self) { try FlatpakMoveWire.parseReply(bytes, for: request()) }
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
        #expect(throws: FlatpakMoveError.service("the move service answered with no valid approval")) {
            try FlatpakMoveWire.parseReply(FlatpakMoveWire.reply(.success(other)), for: request())
        }
    }
}
