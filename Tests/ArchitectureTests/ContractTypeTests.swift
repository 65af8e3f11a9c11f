import Foundation
import Testing
import TestSupport

/// What every side of the Guard's interface shares is one type, written once:
/// a failure is a `GuardFailure` wherever it is thrown or received, and the
/// alert's answer is spelled on the wire by `AlertResponse` alone.
@Suite struct ContractTypeTests {
    /// The one type that carries a Guard failure.
    static let failureType = "GuardProtocol/GuardFailure.swift: GuardFailure"
    /// The one file that spells the alert's answers as they travel.
    static let alertFile = "FamilyControlsModel/AlertResponse.swift"

    /// Every Swift file under Sources: its path there, and its text.
    static func sources() throws -> [(path: String, text: String)] {
        let root = packageRoot + "/Sources"
        guard let files = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [(path: String, text: String)] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            found.append((file, try String(contentsOfFile: root + "/" + file, encoding: .utf8)))
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The names of the types `text` declares that conform to `Error` and
    /// carry a `FamilyControlsError` (a stored or computed property of that
    /// type, or a case holding one, in their body or a nested type's).
    static func failureTypes(in text: String) -> [String] {
        let header = /\b(?:struct|enum|class|actor)\s+(\w+)(?:<[^>{]*>)?\s*:\s*([^{]*)\{/
        let carries = /(?:var|let)\s+\w+\s*:\s*FamilyControlsError\b|case\s+\w+\s*\([^)]*FamilyControlsError\b/
        var names: [String] = []
        for match in text.matches(of: header) {
            let name = String(match.1)
            let conformances = match.2.split(whereSeparator: { ",& \n\t".contains($0) })
            guard name != "FamilyControlsError", conformances.contains("Error") else { continue }
            if body(after: match.range.upperBound, in: text).contains(carries) { names.append(name) }
        }
        return names
    }

    /// The text from `start` (just after an opening brace) to its closing
    /// brace; braces inside string literals on one line do not count.
    static func body(after start: String.Index, in text: String) -> Substring {
        var depth = 1
        var inString = false
        var previous: Character = " "
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" && previous != "\\" { inString.toggle() }
            if character == "\n" { inString = false }
            if !inString {
                if character == "{" { depth += 1 }
                if character == "}" { depth -= 1; if depth == 0 { break } }
            }
            previous = character
            index = text.index(after: index)
        }
        return text[start..<index]
    }

    @Test func guardFailuresHaveOneErrorTypeOnEverySide() throws {
        var found: [String] = []
        for (path, text) in try Self.sources() {
            found += Self.failureTypes(in: text).map { "\(path): \($0)" }
        }
        #expect(found == [Self.failureType], "Error types that carry a FamilyControlsError:\n\(found.joined(separator: "\n"))")
    }

    /// The check finds what it looks for: the failure types there were before.
    @Test func theCheckFindsASecondFailureType() {
        let client = """
            struct GuardClientFailure: Error, Sendable {
                var error: FamilyControlsError
                var message: String
                init(_ error: FamilyControlsError, _ message: String) {
                    self.error = error
                    self.message = "{\\(message)"
                }
            }
            """
        let backend = """
            package struct AuthorizationFailure: Error, Sendable {
                package var error: FamilyControlsError
                package var resultingStatus: AuthorizationStatus?
            }
            """
        let nested = """
            package struct GuardFailure: Error, Hashable, Sendable, CustomStringConvertible {
                package enum Kind: Hashable, Sendable {
                    case familyControls(FamilyControlsError)
                    case notFound
                }
                package var kind: Kind
            }
            """
        #expect(Self.failureTypes(in: client) == ["GuardClientFailure"])
        #expect(Self.failureTypes(in: backend) == ["AuthorizationFailure"])
        #expect(Self.failureTypes(in: nested) == ["GuardFailure"])
        // An error of its own (familyctl's exit status), and a type that only mentions the public error, are fine.
        let command = """
            struct CommandFailure: Error {
                var code: ExitCode
                var message: String
            }
            struct Mapping {
                var error: FamilyControlsError
            }
            """
        #expect(Self.failureTypes(in: command).isEmpty)
    }

    /// Lines of `text` that spell an alert answer's wire form as a string literal, outside comments.
    static func wireSpellings(in text: String) -> [String] {
        text.split(separator: "\n").filter { line in
            !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && (line.contains("\"continue\"") || line.contains("\"dont-allow\""))
        }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func theAlertAnswersWireSpellingIsWrittenOnlyInAlertResponse() throws {
        var elsewhere: [String] = []
        var inAlertFile: [String] = []
        for (path, text) in try Self.sources() {
            let lines = Self.wireSpellings(in: text)
            if path == Self.alertFile { inAlertFile = lines } else { elsewhere += lines.map { "\(path): \($0)" } }
        }
        #expect(elsewhere.isEmpty, "the alert's answer is spelled outside \(Self.alertFile):\n\(elsewhere.joined(separator: "\n"))")
        #expect(inAlertFile.contains { $0.contains("\"continue\"") } && inAlertFile.contains { $0.contains("\"dont-allow\"") },
                "\(Self.alertFile) no longer spells the answers: \(inAlertFile)")
        // The check finds what it looks for: the relay as it was.
        #expect(Self.wireSpellings(in: #"            case .allow?: response = "continue""#).count == 1)
        #expect(Self.wireSpellings(in: #"    case dontAllow = "dont-allow""#).count == 1)
    }
}
