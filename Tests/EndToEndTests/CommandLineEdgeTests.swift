import Foundation
import Testing
import TestSupport

/// The shipped commands' own answers to help, typos and unknown options, as
/// an administrator types them: the real binaries, no Guard needed.
@Suite(.enabled(if: productExists("familyctl") && productExists("familycontrols-demo"),
                "run `swift build` first: the test runs the real binaries"))
struct CommandLineEdgeTests {
    private let socket = "/nonexistent/familycontrols-\(UUID().uuidString.prefix(8)).socket"

    private func familyctl(_ arguments: [String]) throws -> ProcessResult {
        try run(productPath("familyctl"), arguments, environment: ["FAMILYCONTROLS_SOCKET": socket])
    }

    @Test func anUnknownOptionIsNamedNotTakenForAMissingVerb() throws {
        let result = try familyctl(["--frobnicate"])
        #expect(result.status == 2)
        #expect(result.standardError == "familyctl: unknown option \"--frobnicate\" (options come with a verb)\nTry 'familyctl help'.\n")
        let after = try familyctl(["status", "--frobnicate"])
        #expect(after.status == 2)
        #expect(after.standardError.contains("--frobnicate"), "\(after.standardError)")
        #expect(after.standardError.hasSuffix("Try 'familyctl help'.\n"))
    }

    @Test func helpIsAVerbAndEveryVerbHasItsOwn() throws {
        let overview = try familyctl(["help"])
        #expect(overview.status == 0)
        #expect(overview.standardOutput.hasPrefix("usage: familyctl [--socket PATH] VERB [OPTIONS]"))
        for verb in ["requests", "approve", "deny", "status", "set", "revoke", "graduate", "log", "locks", "authenticate"] {
            #expect(overview.standardOutput.contains("\n  \(verb)"), "\(verb) missing from the overview")
            let viaHelp = try familyctl(["help", verb])
            let viaOption = try familyctl([verb, "--help"])
            #expect(viaHelp.status == 0 && viaOption.status == 0)
            #expect(viaHelp.standardOutput == viaOption.standardOutput)
            #expect(viaHelp.standardOutput.hasPrefix("usage: familyctl \(verb)"), "\(viaHelp.standardOutput)")
        }
        // Help never needs the Guard, root or a valid rest of the line.
        let withJunk = try familyctl(["approve", "--help", "not-a-number"])
        #expect(withJunk.status == 0)
    }

    @Test func aTypoIsAnsweredWithTheVerbMeant() throws {
        let result = try familyctl(["stauts"])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("familyctl: unknown verb \"stauts\" (did you mean status?)"), "\(result.standardError)")
        let help = try familyctl(["help", "lgo"])
        #expect(help.status == 2)
        #expect(help.standardError.contains("did you mean log?"))
    }

    @Test func nothingAtAllShowsTheUsageOnStandardError() throws {
        let result = try familyctl([])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("usage: familyctl"))
    }

    @Test func theGuardBeingAwayIsItsOwnExitStatus() throws {
        let result = try familyctl(["log"])
        #expect(result.status == 5, "\(result.standardError)")
        #expect(result.standardError.contains(socket))
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], ["status", "--help"]])
    func theDemoHasHelpToo(_ arguments: [String]) throws {
        let result = try run(productPath("familycontrols-demo"), arguments, environment: ["FAMILYCONTROLS_SOCKET": socket])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("usage: familycontrols-demo request"))
        #expect(result.standardError.isEmpty)
    }
}
