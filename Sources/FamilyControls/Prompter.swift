import SystemKit

/// The authentication sheet: shows prompts and returns answers. A GUI app
/// supplies its own dialog; the library has a terminal, a standard-input
/// (`sudo -S` style) and an askpass (`SUDO_ASKPASS` style) one.
///
/// Set ``AuthorizationCenter/prompter`` before requesting authorization.
public protocol Prompter: Sendable {
    /// Shows `prompt`; for prompts that expect an answer, returns it, or nil to
    /// cancel the request. Called on a thread of the library's own, never the
    /// main thread, so it may block until the person answers.
    func respond(to prompt: AuthorizationPrompt) -> String?
}

/// A prompter of the library's own that can hand over a password as bytes,
/// never as a `String` (which cannot be zeroed). The library asks it for
/// `.secret` prompts and sends the bytes to the Guard as they are.
protocol SecretPrompting: Prompter {
    /// The answer to a `.secret` prompt as bytes, or nil to cancel.
    func respondWithSecret(to prompt: AuthorizationPrompt) -> SecretBytes?
}
