import ChildInspection
import FlatpakNames
import Testing
import TestSupport

@Suite struct FlatpakInfoTests {
    private func parse(_ text: String) throws(FlatpakInfoError) -> FlatpakInfo {
        try FlatpakInfo(parsing: Array(text.utf8))
    }

    private func refusal(_ text: String) -> FlatpakInfoError? {
        do { _ = try parse(text); return nil } catch { return error }
    }

    /// The genuine file with `line` (a whole line, matched exactly) replaced by `replacement`.
    private func genuine(replacing line: String, with replacement: String) -> String {
        let lines = genuineFlatpakInfo.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains(line), "the genuine file has no line \(line)")
        return lines.map { $0 == line ? replacement : $0 }.joined(separator: "\n")
    }

    @Test func readsTheAppAndItsDeploymentFromWhatFlatpakWrites() throws {
        let info = try parse(genuineFlatpakInfo)
        let commit = String(repeating: "ab", count: 32)
        #expect(info == FlatpakInfo(
            appID: "org.example.Demo", runtime: "runtime/org.example.Platform/x86_64/1",
            appPath: "/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/master/\(commit)/files",
            appCommit: commit,
            runtimePath: "/home/child/.local/share/flatpak/runtime/org.example.Platform/x86_64/1/\(String(repeating: "cd", count: 32))/files",
            runtimeCommit: String(repeating: "cd", count: 32),
            instanceID: "2684113742", branch: "master", arch: "x86_64", flatpakVersion: "1.16.0"))
    }

    @Test func aSecondAppPathIsRefusedNotTakenLastAsGKeyFileWould() {
        let forged = genuineFlatpakInfo + "[Instance]\napp-path=/home/child/fake/files\n"
        #expect(refusal(forged) == .duplicateGroup(line: 25))
        let twice = genuine(replacing: "branch=master", with: "branch=master\napp-path=/home/child/fake/files")
        #expect(refusal(twice) == .duplicateKey(line: 13))
        let spaced = genuine(replacing: "branch=master", with: "branch=master\napp-path =/home/child/fake/files")
        #expect(refusal(spaced) == .duplicateKey(line: 13))
    }

    @Test func aNameGivenTwiceIsRefused() {
        let text = genuine(replacing: "name=org.example.Demo", with: "name=org.example.Demo\nname=org.example.Other")
        #expect(refusal(text) == .duplicateKey(line: 3))
    }

    /// A child can mount a file only root may read at `/.flatpak-info` of
    /// their own sandbox: what the Guard says of it must not tell its text.
    @Test func aRefusalNeverQuotesTheFile() {
        let key = refusal("[Application]\nname=org.example.Demo\n[Instance]\ns3cr3t=1\ns3cr3t=2\n")
        #expect(key == .duplicateKey(line: 5))
        #expect(key?.description == ".flatpak-info line 5 sets a key set before in its group")
        let group = refusal("[Application]\n[s3cr3t]\nk=1\n[s3cr3t]\n")
        #expect(group == .duplicateGroup(line: 4))
        #expect(group?.description == ".flatpak-info line 4 starts a group given before")
    }

    @Test func aRuntimeSandboxIsNotAnApp() {
        let text = genuineFlatpakInfo.replacing("[Application]", with: "[Runtime]")
        #expect(refusal(text) == .notAnApp)
    }

    @Test(arguments: [
        ("name=org.example.Demo", "", FlatpakInfoError.missing(group: "Application", key: "name")),
        ("app-path=/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/master/\(String(repeating: "ab", count: 32))/files", "",
         .missing(group: "Instance", key: "app-path")),
        ("app-commit=\(String(repeating: "ab", count: 32))", "", .missing(group: "Instance", key: "app-commit")),
        ("instance-id=2684113742", "", .missing(group: "Instance", key: "instance-id")),
        ("branch=master", "", .missing(group: "Instance", key: "branch")),
        ("arch=x86_64", "", .missing(group: "Instance", key: "arch")),
    ])
    func aFileWithoutWhatTheGuardReadsIsRefused(line: String, replacement: String, expected: FlatpakInfoError) {
        #expect(refusal(genuine(replacing: line, with: replacement)) == expected)
    }

    @Test(arguments: [
        "relative/files", "/home/child/../root/files", "/home/child/./x/files", "/home//child/files",
        "/home/child/files/", "/", "/home/child/a\\x2f/files",
    ])
    func anAppPathNotInItsOneNormalizedSpellingIsRefused(path: String) {
        let line = "app-path=/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/master/\(String(repeating: "ab", count: 32))/files"
        #expect(refusal(genuine(replacing: line, with: "app-path=\(path)")) == .invalidValue(group: "Instance", key: "app-path"))
    }

    @Test(arguments: [
        ("app-commit=\(String(repeating: "ab", count: 32))", "app-commit=\(String(repeating: "AB", count: 32))", "app-commit"),
        ("app-commit=\(String(repeating: "ab", count: 32))", "app-commit=abc", "app-commit"),
        ("runtime-commit=\(String(repeating: "cd", count: 32))", "runtime-commit=cd", "runtime-commit"),
        ("instance-id=2684113742", "instance-id=12a", "instance-id"),
        ("branch=master", "branch=-master", "branch"),
        ("branch=master", "branch=ma/ster", "branch"),
        ("arch=x86_64", "arch=x86-64", "arch"),
        ("flatpak-version=1.16.0", "flatpak-version=1.16.0;rm", "flatpak-version"),
    ])
    func anInvalidValueIsRefused(line: String, replacement: String, key: String) {
        #expect(refusal(genuine(replacing: line, with: replacement)) == .invalidValue(group: "Instance", key: key))
    }

    @Test func anInvalidRuntimeRefIsRefused() {
        let text = genuine(replacing: "runtime=runtime/org.example.Platform/x86_64/1", with: "runtime=runtime/../x86_64/1")
        #expect(refusal(text) == .invalidValue(group: "Application", key: "runtime"))
    }

    @Test func hostileBytesAreRefusedWithTheLineAtFault() {
        #expect(refusal(genuineFlatpakInfo.replacing("branch=master", with: "branch=mas\u{0}ter")) == .controlCharacter(line: 12))
        #expect(refusal(genuineFlatpakInfo.replacing("branch=master", with: "branch=master\r")) == .controlCharacter(line: 12))
        #expect(refusal("[Application]\nname=org.example.Demo\nthis is no key\n") == .malformedLine(line: 3))
        #expect(refusal("name=org.example.Demo\n[Application]\n") == .keyOutsideGroup(line: 1))
        #expect(refusal("[Application\nname=org.example.Demo\n") == .malformedLine(line: 1))
        #expect(refusal("[App[lication]]\n") == .malformedLine(line: 1))
        #expect(refusal("[Application]\nna]me=org.example.Demo\n") == .malformedLine(line: 2))
        let longLine = "[Application]\nname=org.example.Demo\n# " + String(repeating: "x", count: FlatpakInfo.lineLimit) + "\n"
        #expect(refusal(longLine) == .lineTooLong(line: 3, limit: FlatpakInfo.lineLimit))
        #expect(throws: FlatpakInfoError.notText) { try FlatpakInfo(parsing: Array(genuineFlatpakInfo.utf8) + [0xFF, 0x0A]) }
        let huge = [UInt8](repeating: UInt8(ascii: "#"), count: FlatpakInfo.sizeLimit + 1)
        #expect(throws: FlatpakInfoError.tooLarge(limit: FlatpakInfo.sizeLimit)) { try FlatpakInfo(parsing: huge) }
    }

    @Test func anEscapeInAValueTheGuardReadsIsRefused() {
        #expect(refusal(genuine(replacing: "branch=master", with: "branch=\\smaster")) == .invalidValue(group: "Instance", key: "branch"))
    }

    /// A combining mark joins `=` and `[` into one Character with it; read as
    /// bytes, the line is still what Flatpak (and GKeyFile) would see.
    @Test func aCombiningMarkAfterTheSeparatorDoesNotHideIt() throws {
        let text = genuine(replacing: "flatpak-version=1.16.0", with: "x-note=\u{301}note\nflatpak-version=1.16.0")
        #expect(try parse(text).flatpakVersion == "1.16.0")
        #expect(refusal(genuine(replacing: "name=org.example.Demo", with: "name=\u{301}org.example.Demo"))
                == .invalidValue(group: "Application", key: "name"))
    }

    @Test(arguments: [
        ("org.example.Demo", true), ("com.example.My_App", true), ("org.example.app-name", true),
        ("io.github.user.Some_Thing2", true), ("_org.example.App", true),
        ("org.example", false), ("1org.example.App", false), ("org.1example.App", false),
        ("org.exa-mple.App", false), ("org..App", false), (".org.example.App", false),
        ("org.example.App.", false), ("org.example.Dèmo", false), ("org.example.A/pp", false), ("", false),
        ("org.example." + String(repeating: "a", count: 243), true),
        ("org.example." + String(repeating: "a", count: 244), false),
    ])
    func appIDsFollowFlatpaksRules(id: String, valid: Bool) {
        #expect(FlatpakNames.isValidAppID(id) == valid)
    }
}
