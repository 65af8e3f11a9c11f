import Foundation
import SystemKit

/// Runs a helper program once per prompt, with the prompt text as its
/// argument, and reads the answer from its standard output, like
/// `SUDO_ASKPASS`. Info and error messages are passed too; their output is
/// ignored.
///
/// An app sets one itself (`center.prompter = AskpassPrompter(program:)`);
/// `FAMILYCONTROLS_ASKPASS` is used, by default, for an individual's own
/// password only, never for what a parent or guardian is shown.
public struct AskpassPrompter: Prompter, SecretPrompting {
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
        guard let answer = run(for: prompt) else { return nil }
        return answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    func respondWithSecret(to prompt: AuthorizationPrompt) -> SecretBytes? {
        run(for: prompt)
    }

    /// Runs the helper for `prompt`; its first line of output as bytes, with
    /// the buffer it was read into zeroed.
    private func run(for prompt: AuthorizationPrompt) -> SecretBytes? {
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
        var data = output.fileHandleForReading.readDataToEndOfFile()
        defer { data.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        process.waitUntilExit()
        guard prompt.expectsAnswer, process.terminationStatus == 0 else { return nil }
        return data.withUnsafeBytes { bytes in
            let limited = UnsafeRawBufferPointer(rebasing: bytes.prefix(4096))
            let line = limited.firstIndex(of: UInt8(ascii: "\n")).map { UnsafeRawBufferPointer(rebasing: limited[..<$0]) } ?? limited
            return SecretBytes(copying: line)
        }
    }
}
