#if canImport(Glibc)
import Glibc
#endif
import PAM
import SystemKit

/// The Guard's PAM conversation answered through pinentry in the guardian's
/// own session, as `familyctl approve` answers it on their terminal: each
/// prompt is one `GETPIN`, each message is shown in the next dialog's
/// description (an error as its error line). The Guard's own words on what
/// is about to change take the place of the caller's `description`, which
/// is shown only when the Guard said nothing: the request is shown once.
///
/// pinentry starts at the first prompt only: a guardian who authenticated
/// lately is not asked at all.
final class PinentryConversation: PAMConversation, @unchecked Sendable {
    // Used only on the thread deciding one request.
    private let program: String
    private let environment: [String]
    private let title: String
    private let description: String
    private var pinentry: Pinentry?
    private var notes: [String] = []
    private var error: String?

    init(program: String, environment: [String], title: String, description: String) {
        self.program = program
        self.environment = environment
        self.title = title
        self.description = description
    }

    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text):
            notes.append(text)
            return nil
        case .error(let text):
            error = text
            return nil
        case .secretPrompt(let prompt), .textPrompt(let prompt):
            let answer: Pinentry.Answer
            do throws(Pinentry.Failure) {
                let pinentry = try opened(deadline: deadline)
                try pinentry.set("SETTITLE", title, deadline: deadline)
                try pinentry.set("SETDESC", (notes.isEmpty ? [description] : notes).joined(separator: "\n"), deadline: deadline)
                try pinentry.set("SETPROMPT", prompt, deadline: deadline)
                if let error { try pinentry.set("SETERROR", error, deadline: deadline) }
                notes = []
                error = nil
                answer = try pinentry.getPin(deadline: deadline)
            } catch {
                writeToStandardError("familyctl: \(error)\n")
                throw .canceled
            }
            switch answer {
            case .pin(let secret): return secret
            case .canceled: throw .canceled
            case .timedOut: throw .timedOut
            }
        }
    }

    /// Closes the dialog program.
    func finish() {
        pinentry?.bye()
        pinentry = nil
    }

    private func opened(deadline: MonotonicInstant) throws(Pinentry.Failure) -> Pinentry {
        if let pinentry { return pinentry }
        var variables: [String: String] = [:]
        for entry in environment {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            variables[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        let started = try Pinentry(program: program, environment: environment, terminal: Terminal.name,
                                   term: variables["TERM"], deadline: deadline)
        pinentry = started
        return started
    }
}
