import SystemKit

/// Prompts on the controlling terminal (`/dev/tty`), echo off for secrets,
/// the terminal restored on every way out, Ctrl-C included.
public struct TerminalPrompter: Prompter, SecretPrompting {
    /// Nil when the process has no controlling terminal.
    public init?() {
        guard Terminal() != nil else { return nil }
    }

    public func respond(to prompt: AuthorizationPrompt) -> String? {
        guard let terminal = Terminal() else { return nil }
        switch prompt.kind {
        case .info, .error, .pending:
            terminal.write(prompt.message.hasSuffix("\n") ? prompt.message : prompt.message + "\n")
            return nil
        case .alert:
            terminal.write(prompt.message + "\n")
            let here = prompt.offersGuardianHere
            if here { terminal.write("A parent or guardian who is here may approve now with their one-time code.\n") }
            let question = here ? "Continue, a parent or guardian is here, or Don't Allow? [continue/here/don't allow]: "
                                : "Continue or Don't Allow? [continue/don't allow]: "
            for _ in 0..<3 {
                guard let line = try? terminal.readLine(prompt: question, secret: false) else {
                    return nil
                }
                let text = String(decoding: line.withUnsafeBytes { Array($0) }, as: UTF8.self)
                if let answer = AlertResponse(text), here || answer != .guardianHere { return text }
                terminal.write(here ? "Please answer continue (y), here (h) or don't allow (n).\n"
                                    : "Please answer continue (y) or don't allow (n).\n")
            }
            return nil
        case .guardian, .secret, .text:
            guard let line = try? terminal.readLine(prompt: prompt.message, secret: prompt.kind == .secret) else { return nil }
            return String(decoding: line.withUnsafeBytes { Array($0) }, as: UTF8.self)
        }
    }

    func respondWithSecret(to prompt: AuthorizationPrompt) -> SecretBytes? {
        guard let terminal = Terminal() else { return nil }
        return try? terminal.readLine(prompt: prompt.message, secret: true)
    }
}
