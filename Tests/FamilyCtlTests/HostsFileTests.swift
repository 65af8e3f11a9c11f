import Foundation
@testable import FamilyCtl
import GuardProtocol
import SystemKit
import Testing
import TestSupport
import Varlink

/// `-H @FILE`: the machines of a room or a school, one a line.
@Suite struct HostsFileTests {
    @Test func aHostsFileNamesEachMachineOnceInOrderWithoutCommentsOrBlankLines() throws {
        let text = "# room 7\n\nlab02   # front row\n\tt@lab01:2222\r\n  # lab03\nlab02\n[::1]:2200#loopback\n"
        let hosts = try RemoteHost.hostsFile(text, named: "room7")
        #expect(hosts.map(\.name) == ["lab02", "t@lab01:2222", "[::1]:2200"])
        #expect(hosts[1].user == "t" && hosts[1].port == 2222)
    }

    @Test(arguments: [
        ("lab01\n\nlab 02\n", 3), ("lab01\n-oProxyCommand=sh\n", 2), ("@lab\n", 1), ("lab01\r\nlab:0\r\n", 2),
        ("lab01,lab02\n", 1), ("lab01\n\u{0}\n", 2),
    ])
    func aMalformedLineIsRefusedNamingTheFileAndTheLine(text: String, line: Int) {
        #expect {
            try RemoteHost.hostsFile(text, named: "rooms/7")
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.code == .usage && failure.message.hasPrefix("-H @rooms/7, line \(line): \"")
        }
    }

    @Test func aHostsFileThatNamesNoMachineIsRefused() {
        for text in ["", "\n\n", "# nobody yet\n   # still nobody\n"] {
            #expect {
                try RemoteHost.hostsFile(text, named: "empty")
            } throws: { ($0 as? CommandFailure)?.message == "-H @empty: the hosts file names no machine" }
        }
    }

    @Test func moreThanAThousandMachinesAreRefusedInAFileAndInAList() throws {
        let thousand = (1...1000).map { "lab\($0)" }
        #expect(try RemoteHost.hostsFile(thousand.joined(separator: "\n"), named: "school").count == 1000)
        #expect(throws: CommandFailure.self) { try RemoteHost.hostsFile((thousand + ["lab1001"]).joined(separator: "\n"), named: "school") }
        #expect(try RemoteHost.list(thousand.joined(separator: ",")).count == 1000)
        #expect(throws: CommandFailure.self) { try RemoteHost.list((thousand + ["lab1001"]).joined(separator: ",")) }
    }

    @Test func aFileThatCannotBeReadOrIsTooLargeIsRefusedNamingIt() throws {
        try withTemporaryDirectorySync { directory in
            let big = "\(directory)/big"
            try String(repeating: "lab01 # a long comment about the front row of room 7\n", count: 1400)
                .write(toFile: big, atomically: true, encoding: .utf8)
            #expect {
                try RemoteHost.list("@\(big)")
            } throws: { ($0 as? CommandFailure)?.message == "-H @\(big): the hosts file is larger than 64 KiB" }
            #expect {
                try RemoteHost.list("@\(directory)/missing")
            } throws: { ($0 as? CommandFailure)?.message.hasPrefix("-H @\(directory)/missing: cannot read the hosts file: ") == true }
            #expect(throws: CommandFailure.self) { try RemoteHost.list("@\(directory)") }
            #expect(throws: CommandFailure.self) { try RemoteHost.list("@") }

            let room = "\(directory)/room"
            try "\u{FEFF}lab01\nlab02 # back\n".write(toFile: room, atomically: true, encoding: .utf8)
            #expect(try RemoteHost.list("@\(room)").map(\.name) == ["lab01", "lab02"])
            // A deciding verb goes to one machine at a time, from a file as from a list.
            for verb in [["approve", "1"], ["deny", "1"], ["set", "--user", "a", "--app", "b", "approved"], ["graduate", "a"]] {
                #expect(FamilyCtl.main(["-H", "@\(room)"] + verb) == ExitCode.usage.rawValue)
            }
        }
    }

    @Test func severalMachinesJSONIsOneDocumentWhoseEveryRowNamesItsHostFirst() throws {
        let lab1 = try RemoteHost(parsing: "t@lab01:2222"), lab2 = try RemoteHost(parsing: "lab02")
        let monitor = Guard.Monitor(appID: "org.example.App", user: "kid", session: "c2", state: .running, pid: 9,
                                    startedAt: 0, restarts: 0)
        let text = FamilyCtl.hostRowsJSON("monitors", [(lab1, [monitor, monitor]), (lab2, []), (lab2, [monitor])])
        #expect(text.hasSuffix("}\n") && text.split(separator: "\n").count == 1)
        let rows = try #require(try JSONValue(parsing: text).objectValue?["monitors"]?.arrayValue).compactMap(\.objectValue)
        #expect(rows.map { $0.members.first?.key } == ["host", "host", "host"])
        #expect(rows.map { $0["host"]?.stringValue } == ["t@lab01:2222", "t@lab01:2222", "lab02"])
        // The rest of each row is the row as one machine's --json writes it.
        let single = try #require(try JSONValue(parsing: FamilyCtl.monitorsJSON([monitor])).objectValue?["monitors"]?.arrayValue?.first)
        var withoutHost = rows[2]
        withoutHost["host"] = nil
        #expect(JSONValue.object(withoutHost) == single)
    }
}
