import Foundation
@testable import GuardKit
import SystemKit
import Testing
import TestSupport
@testable import GuardDiagnostics

/// Which setuid and capability programs `--check-config` takes for the
/// distribution's own, on real programs (copies of `id` and `chattr`, given
/// a mode or a capability with `setcap`) in a folder the test walks, against
/// a dpkg database the test writes.
@Suite(.serialized, .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/setcap"),
                             "needs root and setcap (libcap2-bin)"))
struct PrivilegedProgramsTests {
    /// `bin/` with `program` copied from `source`, `info/` holding `files`, and the review of them.
    private func review(copying source: String, prepare: (String) throws -> Void,
                        files: (String) -> [String: String]) throws -> [ChildPrivilegeCheck.ProgramReview.Judged] {
        try withTemporaryDirectorySync { directory in
            chmod(directory, 0o755)
            let manager = FileManager.default
            try manager.createDirectory(atPath: "\(directory)/bin", withIntermediateDirectories: false)
            try manager.createDirectory(atPath: "\(directory)/info", withIntermediateDirectories: false)
            let program = "\(directory)/bin/tool"
            try copyProgram(source, to: program)
            try prepare(program)
            for (name, text) in files(program) { try text.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
            var sources = ChildPrivilegeCheck.Sources()
            sources.programFolders = ["\(directory)/bin"]
            sources.packageDatabase = "\(directory)/info"
            sources.statOverride = "\(directory)/statoverride"
            return ChildPrivilegeCheck.ProgramReview(sources: sources, guardians: [], groups: [:]).judged
        }
    }

    private func setcap(_ capabilities: String, _ program: String) throws {
        let result = try run("/usr/sbin/setcap", [capabilities, program]) as ProcessResult
        try #require(result.succeeded, "\(result.standardError)")
    }

    @Test func aPackagedProgramGivenACapabilityByHandIsRefused() throws {
        let judged = try review(copying: "/usr/bin/chattr", prepare: { try setcap("cap_linux_immutable+ep", $0) },
                                files: { ["info/e2fsprogs.list": "/\n\($0)\n", "info/e2fsprogs.postinst": "#!/bin/sh\nexit 0\n"] })
        #expect(judged.map(\.severity) == [.refused])
        #expect(judged.first?.outcome == "can clear the locks")
        #expect(judged.first?.way.hasSuffix("has capabilities cap_linux_immutable=ep, which package e2fsprogs does not set") == true)
    }

    @Test func capabilitiesThePackagesOwnScriptSetsAreTheDistributions() throws {
        let judged = try review(copying: "/usr/bin/chattr", prepare: { try setcap("cap_net_raw+ep", $0) },
                                files: { ["info/iputils-ping.list": "\($0)\n",
                                          "info/iputils-ping.postinst": "setcap cap_net_raw+ep \($0)\n"] })
        #expect(judged.isEmpty, "\(judged.map(\.way))")
    }

    @Test func aCapabilityThatDoesNotDefeatTheLocksIsAWarning() throws {
        let judged = try review(copying: "/usr/bin/chattr", prepare: { try setcap("cap_net_raw+ep", $0) }, files: { _ in [:] })
        #expect(judged.map(\.severity) == [.warning])
        #expect(judged.first?.outcome == "can run a program with cap_net_raw")
    }

    @Test func aPackagedSetuidProgramPassesUnlessItsStatOverrideDisagrees() throws {
        let setuid: (String) throws -> Void = { chmod($0, 0o4755) }
        let packaged = try review(copying: "/usr/bin/id", prepare: setuid, files: { ["info/coreutils.list": "\($0)\n"] })
        #expect(packaged.isEmpty, "dpkg records no modes: a packaged setuid program is taken as shipped")
        let overridden = try review(copying: "/usr/bin/id", prepare: setuid, files: {
            ["info/coreutils.list": "\($0)\n", "statoverride": "root root 755 \($0)\n"]
        })
        #expect(overridden.map(\.outcome) == ["can run a program as root"])
        #expect(overridden.first?.way.hasSuffix("is setuid root (mode 4755), whose dpkg-statoverride entry says root root 755") == true)
        let agreed = try review(copying: "/usr/bin/id", prepare: setuid, files: {
            ["info/coreutils.list": "\($0)\n", "statoverride": "root root 4755 \($0)\n"]
        })
        #expect(agreed.isEmpty)
    }

    @Test func withoutADpkgDatabaseTheProgramsAreNotCheckedAndTheCheckSaysSo() throws {
        try withTemporaryDirectorySync { directory in
            try FileManager.default.createDirectory(atPath: "\(directory)/bin", withIntermediateDirectories: false)
            try copyProgram("/usr/bin/id", to: "\(directory)/bin/tool")
            chmod("\(directory)/bin/tool", 0o4755)
            var sources = ChildPrivilegeCheck.Sources()
            sources.programFolders = ["\(directory)/bin"]
            sources.packageDatabase = "\(directory)/no-dpkg"
            let review = ChildPrivilegeCheck.ProgramReview(sources: sources, guardians: [], groups: [:])
            #expect(review.judged.isEmpty)
            #expect(review.unchecked.map(\.message) == ["no dpkg database: which setuid and capability programs are the "
                + "distribution's is not known, so none is checked"])
        }
    }

    @Test func theWalkStopsAtItsBoundAndSaysWhere() throws {
        try withTemporaryDirectorySync { directory in
            for name in ["a", "b", "c"] { #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: nil)) }
            let walk = PrivilegedPrograms(roots: [directory], entryLimit: 2, depthLimit: 8)
            #expect(walk.incomplete.map(\.folder) == [directory])
            #expect(walk.incomplete.first?.reason == "more than 2 files")
        }
    }
}
