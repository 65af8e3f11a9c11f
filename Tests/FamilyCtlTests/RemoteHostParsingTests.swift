import Testing
@testable import FamilyCtl
import SystemKit

/// `-H [USER@]HOST[:PORT]`: what reaches ssh's command line, and what is refused before ssh runs.
@Suite struct RemoteHostParsingTests {
    @Test(arguments: [
        ("lab07", nil, "lab07", nil),
        ("teacher@lab07", "teacher", "lab07", nil),
        ("teacher@127.0.0.1:2222", "teacher", "127.0.0.1", 2222),
        ("[::1]:2200", nil, "::1", 2200),
        ("fe80::1%eth0", nil, "fe80::1%eth0", nil),
        ("a.b@lab-07.example.org", "a.b", "lab-07.example.org", nil),
    ] as [(String, String?, String, Int?)])
    func aDestinationBecomesSSHsLoginHostAndPort(text: String, user: String?, host: String, port: Int?) throws {
        let parsed = try RemoteHost(parsing: text)
        #expect(parsed.user == user)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
        #expect(parsed.name == text)
        // The host always comes after "--", so ssh never reads it as an option.
        let arguments = parsed.sshArguments
        #expect(arguments.suffix(3) == [host, "familyctl", "--stdio-bridge"])
        #expect(arguments[arguments.count - 4] == "--")
    }

    @Test(arguments: ["", "-oProxyCommand=sh", "teacher@-oProxyCommand=sh", "-l@lab", "lab 07", "lab;rm", "lab:0",
                      "lab:65536", "lab:22x", "[::1", "[::1]x", "@lab", "lab/07", "lab\n07"])
    func aHostileDestinationIsRefusedBeforeSSHRuns(text: String) {
        #expect(throws: CommandFailure.self) { try RemoteHost(parsing: text) }
        #expect(FamilyCtl.main(["-H", text, "requests"]) == ExitCode.usage.rawValue)
    }

    @Test func severalHostsAreForTheVerbsThatOnlyReadAndNeverWithALocalSocket() {
        for verb in [["approve", "1"], ["deny", "1"], ["set", "--user", "a", "--app", "b", "denied"],
                     ["revoke", "--user", "a", "--app", "b"], ["graduate", "a"], ["code", "remove"], ["locks", "verify"],
                     ["agent"]] {
            #expect(FamilyCtl.main(["-H", "lab1,lab2"] + verb) == ExitCode.usage.rawValue)
        }
        #expect(FamilyCtl.main(["--host=lab1", "authenticate", "bob", "--member", "child"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["-H", "lab1", "--socket", "/tmp/x", "requests"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["-H"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["--stdio-bridge", "requests"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["-H", "lab1", "--stdio-bridge"]) == ExitCode.usage.rawValue)
    }

    @Test func aListNamesEachMachineOnceInOrder() throws {
        let hosts = try RemoteHost.list("lab2,lab1,lab2,t@lab3:22")
        #expect(hosts.map(\.name) == ["lab2", "lab1", "t@lab3:22"])
        #expect(throws: CommandFailure.self) { try RemoteHost.list("lab1,,lab2") }
    }
}
