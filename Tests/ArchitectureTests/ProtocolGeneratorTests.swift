import Foundation
import Testing
import TestSupport

/// The generator of the interface's types reads which fields are secret
/// from the interface file itself, and refuses a mark that names no field.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: productPath("generate-protocol")),
                "needs `swift build`'s generate-protocol"))
struct ProtocolGeneratorTests {
    private func generate(_ interface: String, _ arguments: [String] = []) throws -> (status: Int32, output: String, error: String) {
        let directory = NSTemporaryDirectory() + "generator-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try interface.write(toFile: "\(directory)/in.varlink", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("generate-protocol"))
        process.arguments = arguments + ["\(directory)/in.varlink", "\(directory)/out"] + (arguments.isEmpty ? [] : ["M"])
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let output = (try? String(contentsOfFile: "\(directory)/out", encoding: .utf8)) ?? ""
        return (process.terminationStatus, output, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func fieldsMarkedSecretAreCarriedAsBytes() throws {
        let result = try generate("""
            interface org.example.test
            # Asks.
            # [Secret: password]
            method M(user: string, password: ?string) -> (token: string)
            # [Secret reply: token]
            method N() -> (token: string)
            """)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("package var password: SecretBytes?"))
        #expect(result.output.contains("package var user: String"))
        #expect(result.output.contains("package var token: SecretBytes"))
        #expect(result.output.contains("package static let secretFields: Set<String> = [\"password\", \"token\"]"))
    }

    @Test(arguments: [
        ("# [Secret: pasword]\nmethod M(password: string) -> ()", "M marks pasword secret, but has no such parameter"),
        ("# [Secret reply: password]\nmethod M(password: string) -> ()",
         "M marks password of its reply secret, but its reply has no such field"),
    ])
    func aSecretMarkThatNamesNoFieldIsRefused(method: String, message: String) throws {
        let result = try generate("interface org.example.test\n\(method)\n")
        #expect(result.status == 1)
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func anEnumMarkedWithItsModelConvertsBothWaysCaseByCase() throws {
        let result = try generate("""
            interface org.example.test
            # [Model: ExampleKind]
            type Kind (one, two)
            """)
        #expect(result.status == 0, "\(result.error)")
        // The namespace is the interface name's last part: `Test` for org.example.test.
        #expect(result.output.contains("package let testInterfaceName = \"org.example.test\""))
        #expect(result.output.contains("extension Test.Kind {\n    /// The same case of `ExampleKind`.\n    package init(_ value: ExampleKind) {"))
        #expect(result.output.contains("extension ExampleKind {\n    /// The same case of `Test.Kind`.\n    package init(_ value: Test.Kind) {"))
        #expect(result.output.contains("        case .two: self = .two"))
        let record = try generate("interface org.example.test\n# [Model: ExampleKind]\ntype Kind (a: string)\n")
        #expect(record.status == 1)
        #expect(record.error.contains("for an enum type only"), "\(record.error)")
    }

    @Test func theHeaderModeRefusesAMethodTheInterfaceLacks() throws {
        let result = try generate("interface org.example.test\nmethod N() -> ()\n", ["--c-header"])
        #expect(result.status == 1)
        #expect(result.error.contains("no method M"), "\(result.error)")
    }
}
