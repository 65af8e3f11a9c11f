import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// Prompts on standard error and reads one answer per line from standard
/// input, like `sudo -S`: for scripts and tests. End of input cancels.
public struct StandardInputPrompter: Prompter, SecretPrompting {
    public init() {}

    public func respond(to prompt: AuthorizationPrompt) -> String? {
        guard prompt.expectsAnswer else {
            writeToStandardError(prompt.message.hasSuffix("\n") ? prompt.message : prompt.message + "\n")
            return nil
        }
        let text = prompt.kind != .alert ? prompt.message
            : prompt.message + (prompt.offersGuardianHere ? " [continue/here/don't allow]: " : " [continue/don't allow]: ")
        writeToStandardError(text)
        guard let line = try? LineReader.readLine(from: STDIN_FILENO) else {
            writeToStandardError("\n")
            return nil
        }
        if prompt.kind == .secret { writeToStandardError("\n") }
        return String(decoding: line.withUnsafeBytes { Array($0) }, as: UTF8.self)
    }

    func respondWithSecret(to prompt: AuthorizationPrompt) -> SecretBytes? {
        writeToStandardError(prompt.message)
        defer { writeToStandardError("\n") }
        return try? LineReader.readLine(from: STDIN_FILENO)
    }
}
