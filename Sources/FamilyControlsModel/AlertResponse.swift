/// The answer to the alert ("Allow “App” to provide parental controls?"):
/// go on, Don't Allow, or, where the alert offers it, a parent or guardian is
/// here with their one-time code.
///
/// A person types `y`, `yes` or `continue` to allow, `n`, `no` or
/// `don't allow` to refuse, and `h`, `here` or `guardian here` when a parent
/// or guardian is here (``init(_:)``); the answer travels to the Guard as
/// `continue`, `dont-allow` or `guardian-here`, the only spellings it accepts.
public enum AlertResponse: Sendable {
    case allow, refuse
    /// A parent or guardian is at the child's screen and types their name and
    /// current one-time code (only where ``AuthorizationPrompt/offersGuardianHere``).
    case guardianHere

    /// Parses a typed answer, ignoring case, surrounding blanks and the
    /// typographic apostrophe (`Don’t Allow`); nil when it is neither.
    public init?(_ text: String) {
        switch Self.normalized(text) {
        case "y", "yes", "continue": self = .allow
        case "n", "no", "don't allow", "dont allow", "dont-allow", "don't-allow": self = .refuse
        case "h", "here", "guardian here", "guardian-here", "parent here", "a parent or guardian is here": self = .guardianHere
        default: return nil
        }
    }

    /// The answer as the Guard's `Answer` call carries it.
    package var wire: String {
        switch self {
        case .allow: "continue"
        case .refuse: "dont-allow"
        case .guardianHere: "guardian-here"
        }
    }

    /// The answer `wire` spells exactly (as ``wire`` writes it); nil for
    /// anything else, which the Guard takes as no answer.
    package init?(wire: String) {
        switch wire {
        case AlertResponse.allow.wire: self = .allow
        case AlertResponse.refuse.wire: self = .refuse
        case AlertResponse.guardianHere.wire: self = .guardianHere
        default: return nil
        }
    }

    /// `text` without the blanks around it (spaces and tabs), in lower case,
    /// with `’` written `'`. By hand, since the Guard, which links this
    /// module, does not load Foundation.
    private static func normalized(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }),
              let last = scalars.lastIndex(where: { !isBlank($0) }) else { return "" }
        var result = String.UnicodeScalarView()
        for scalar in scalars[first...last] {
            result.append(scalar == "\u{2019}" ? "'" : scalar)
        }
        return String(result).lowercased()
    }

    /// A space of any width, or a tab: Foundation's `CharacterSet.whitespaces`.
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
}
