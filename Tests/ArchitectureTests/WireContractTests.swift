import Foundation
import Testing
import TestSupport

/// The Guard's wire contract is written once: the interface file, from which
/// the build generates GuardProtocol. No code that serves or calls the Guard
/// builds or reads a parameter, reply or error of the interface by its field
/// name, so renaming a field in the file breaks the build, not the wire.
@Suite struct WireContractTests {
    /// The places that speak the Guard's interface.
    static let speakers = ["Sources/GuardKit/Server", "Sources/FamilyCtl", "Sources/FamilyControls",
                           "Sources/FamilyControlsTesting"]

    /// Every field name the interface declares: of its types, methods' parameters and replies, and errors.
    static func fieldNames() throws -> Set<String> {
        let text = try String(contentsOfFile: "\(packageRoot)/Config/org.familycontrols.guard.varlink", encoding: .utf8)
        let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            .joined(separator: "\n")
        let field = try NSRegularExpression(pattern: "([A-Za-z_][A-Za-z0-9_]*)\\s*:")
        let range = NSRange(code.startIndex..., in: code)
        return Set(field.matches(in: code, range: range).compactMap { match in
            Range(match.range(at: 1), in: code).map { String(code[$0]) }
        })
    }

    /// Lines under `speakers` that spell a field of the interface as a JSON
    /// key: `["field"]` (reading or writing a member) or `"field": ` (an
    /// object literal), outside comments.
    static func keyedUses(of fields: Set<String>) throws -> [String] {
        var hits: [String] = []
        let names = fields.sorted().map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|")
        let keyed = try NSRegularExpression(pattern: "\\[\"(\(names))\"\\]|\"(\(names))\"\\s*:\\s*\\.")
        for directory in speakers {
            let root = "\(packageRoot)/\(directory)"
            guard let files = FileManager.default.enumerator(atPath: root) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: "\(root)/\(file)", encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = String(line)
                    if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
                    if keyed.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                        hits.append("\(directory)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
        return hits
    }

    @Test func noReplyOrParameterIsBuiltOrReadByFieldNameOutsideTheGeneratedModule() throws {
        let fields = try Self.fieldNames()
        // The interface's own: enough that an empty list would mean the file was not read.
        #expect(fields.isSuperset(of: ["member", "status", "approvedBy", "prompt", "response", "authorization", "message"]))
        let hits = try Self.keyedUses(of: fields)
        #expect(hits.isEmpty, "spelled outside GuardProtocol:\n\(hits.joined(separator: "\n"))")
    }

    /// The check finds what it looks for: the code before the generated types
    /// was full of it.
    @Test func theCheckCatchesAReplyBuiltOrReadByKey() throws {
        let fields = try Self.fieldNames()
        let names = fields.sorted().joined(separator: "|")
        let keyed = try NSRegularExpression(pattern: "\\[\"(\(names))\"\\]|\"(\(names))\"\\s*:\\s*\\.")
        for line in [#"let lock = reply["authorization"]?["lock"]?.stringValue"#,
                     #"connection.reply(["status": .string(status.description)], continues: true)"#,
                     #"guard let id = call.parameters["id"]?.intValue else { return }"#] {
            #expect(keyed.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil, "\(line)")
        }
        let fine = #"guard let user = arguments["--user"] else { return }"#
        #expect(keyed.firstMatch(in: fine, range: NSRange(fine.startIndex..., in: fine)) == nil)
    }
}
