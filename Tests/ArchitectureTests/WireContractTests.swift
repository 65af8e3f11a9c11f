import Foundation
import Testing
import TestSupport

/// The Guard's wire contract is written once: the interface file, from which
/// the build generates GuardProtocol. No code that serves or calls the Guard
/// builds or reads a parameter, reply or error of the interface by its field
/// name, so renaming a field in the file breaks the build, not the wire.
@Suite struct WireContractTests {
    /// Every source folder but the generated module's own.
    static func speakers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(packageRoot)/Sources").sorted()
            .filter { $0 != "GuardProtocol" }.map { "Sources/\($0)" }
    }

    /// Files whose keys are of another format that happens to share a
    /// field's name, and why.
    static let otherFormats = [
        "Sources/GuardSessions/Sessions/LoginSessions.swift": "the session record's own lines on disk (token=, user=, …)",
        "Sources/familycontrols-bench/SocketBenchmark.swift": "the bare socket baseline's own interface, org.example.bench",
    ]

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

    /// The lines of `text` that spell one of `fields` as a JSON key:
    /// `["field"]` (reading or writing a member) or `"field": .` (an object
    /// literal), outside comments; numbered from 1.
    static func keyedLines(in text: String, fields: Set<String>) throws -> [(number: Int, line: String)] {
        let names = fields.sorted().map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|")
        let keyed = try NSRegularExpression(pattern: "\\[\"(\(names))\"\\]|\"(\(names))\"\\s*:\\s*\\.")
        var hits: [(Int, String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
            if keyed.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                hits.append((number + 1, line.trimmingCharacters(in: .whitespaces)))
            }
        }
        return hits
    }

    /// Lines under ``speakers()`` that spell a field of the interface as a JSON key.
    static func keyedUses(of fields: Set<String>) throws -> [String] {
        var hits: [String] = []
        for directory in try speakers() {
            let root = "\(packageRoot)/\(directory)"
            guard let files = FileManager.default.enumerator(atPath: root) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") && otherFormats["\(directory)/\(file)"] == nil {
                let text = try String(contentsOfFile: "\(root)/\(file)", encoding: .utf8)
                hits += try keyedLines(in: text, fields: fields).map { "\(directory)/\(file):\($0.number): \($0.line)" }
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

    /// The check finds what it looks for, with the scanner the test uses:
    /// the code before the generated types was full of it.
    @Test func theCheckCatchesAReplyBuiltOrReadByKey() throws {
        let fields = try Self.fieldNames()
        let caught = """
            let lock = reply["authorization"]?["lock"]?.stringValue
            connection.reply(["status": .string(status.description)], continues: true)
            // guard let id = call.parameters["id"]?.intValue else { return }
            guard let id = call.parameters["id"]?.intValue else { return }
            guard let user = arguments["--user"] else { return }
            """
        #expect(try Self.keyedLines(in: caught, fields: fields).map(\.number) == [1, 2, 4])
        // Every source folder is looked in, GuardKit's and familyctl's among them.
        let speakers = try Self.speakers()
        #expect(speakers.contains("Sources/GuardKit") && speakers.contains("Sources/FamilyCtl") && !speakers.contains("Sources/GuardProtocol"))
    }
}
