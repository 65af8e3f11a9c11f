import Foundation

/// Runs a helper program once per prompt, with the prompt text as its
/// argument, and reads the answer from its standard output, like
/// `SUDO_ASKPASS`. Info and error messages are passed too; their output is
/// ignored.
///
/// An app sets one itself (`center.prompter = AskpassPrompter(program:)`);
/// `FAMILYCONTROLS_ASKPASS` is used, by default, for an individual's own
/// password only, never for what a parent or guardian is shown.
public struct AskpassPrompter: Prompter {
    /// The helper program's path.
    public var program: String

    public init(program: String) {
        self.program = program
    }

    /// The prompter named by `FAMILYCONTROLS_ASKPASS`, when it is set.
    public static func fromEnvironment() -> AskpassPrompter? {
        guard let program = ProcessInfo.processInfo.environment["FAMILYCONTROLS_ASKPASS"], !program.isEmpty else {
            return nil
        }
        return AskpassPrompter(program: program)
    }

    public func respond(to prompt: AuthorizationPrompt) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = [prompt.message]
        var environment = ProcessInfo.processInfo.environment
        environment["FAMILYCONTROLS_PROMPT_KIND"] = prompt.kind.rawValue
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        // An answer is one line; a helper that writes more is not trusted with more.
        let data = output.fileHandleForReading.readDataToEndOfFile().prefix(4096)
        process.waitUntilExit()
        guard prompt.expectsAnswer, process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}
