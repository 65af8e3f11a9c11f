import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// A PAM conversation with the person at this process's terminal, like sudo's:
/// prompts and messages on `/dev/tty`, echo off for secrets.
package struct TerminalConversation: PAMConversation, @unchecked Sendable {
    // Used only on the PAM transaction's thread.
    private let terminal: Terminal

    /// Nil when the process has no controlling terminal.
    package init?() {
        guard let terminal = Terminal() else { return nil }
        self.terminal = terminal
    }

    package func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text), .error(let text):
            terminal.write(text.hasSuffix("\n") ? text : text + "\n")
            return nil
        case .secretPrompt(let text), .textPrompt(let text):
            do throws(LineReader.Failure) {
                return try terminal.readLine(prompt: text, secret: message.isSecret, deadline: deadline)
            } catch {
                throw error == .timedOut ? .timedOut : .canceled
            }
        }
    }
}

/// A PAM conversation over standard input, like `sudo -S`: prompts and messages
/// on standard error, one answer per line on standard input. End of input cancels.
package struct StandardInputConversation: PAMConversation {
    package init() {}

    package func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text), .error(let text):
            writeToStandardError(text.hasSuffix("\n") ? text : text + "\n")
            return nil
        case .secretPrompt(let text), .textPrompt(let text):
            writeToStandardError(text)
            do throws(LineReader.Failure) {
                let line = try LineReader.readLine(from: STDIN_FILENO, deadline: deadline)
                if message.isSecret { writeToStandardError("\n") }
                return line
            } catch {
                writeToStandardError("\n")
                throw error == .timedOut ? .timedOut : .canceled
            }
        }
    }
}

extension PAMMessage {
    /// Whether the answer must not be echoed.
    package var isSecret: Bool {
        if case .secretPrompt = self { return true }
        return false
    }
}
