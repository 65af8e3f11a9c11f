import Testing

/// The terminal driver the parent-facing captures use types what it is
/// given whole: a throwaway user's password may begin with "-", which tmux
/// would otherwise take for one of its own options ("unknown flag -K").
@Suite(.enabled(if: TerminalScreen.canCapture, "needs tmux"))
struct TerminalDriverTests {
    @Test(arguments: ["-K2x", "--", "-l", "plain"])
    func typedTextReachesTheProgramWhole(text: String) async throws {
        let program = ["/bin/sh", "-c", #"printf 'Answer: '; IFS= read -r x; [ "$x" = "$1" ] && echo same || echo different; echo finished"#,
                       "sh", text]
        let capture = try await TerminalScreen.capture(program, steps: [("Answer:", text)], done: "finished",
                                                       environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(capture.finished, "\(capture)")
        #expect(capture.screen.split(separator: "\n").contains("same"), "the program read something else: \(capture.screen)")
    }
}
