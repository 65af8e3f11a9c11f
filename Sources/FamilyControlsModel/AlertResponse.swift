/// The answer to the alert ("Allow “App” to provide parental controls?"):
/// go on, or Don't Allow.
///
/// A person types `y`, `yes` or `continue` to allow, and `n`, `no` or
/// `don't allow` to refuse (``init(_:)``); the answer travels to the Guard as
/// `continue` or `dont-allow`, the only two spellings it accepts.
public enum AlertResponse: Sendable {
    case allow, refuse

    /// Parses a typed answer, ignoring case, surrounding blanks and the
    /// typographic apostrophe (`Don’t Allow`); nil when it is neither.
    public init?(_ text: String) {
        switch Self.normalized(text) {
        case "y", "yes", "continue": self = .allow
        case "n", "no", "don't allow", "dont allow", "dont-allow", "don't-allow": self = .refuse
        default: return nil
        }
    }

    /// The answer as the Guard's `Answer` call carries it.
    package var wire: String {
        switch self {
        case .allow: "continue"
        case .refuse: "dont-allow"
        }
    }

    /// The answer `wire` spells exactly (as ``wire`` writes it); nil for
    /// anything else, which the Guard takes as no answer.
    package init?(wire: String) {
        switch wire {
        case AlertResponse.allow.wire: self = .allow
        case AlertResponse.refuse.wire: self = .refuse
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
