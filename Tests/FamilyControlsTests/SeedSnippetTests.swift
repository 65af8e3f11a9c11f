import FamilyControls
import Foundation
import Testing
import TestSupport

// Apple's reference text for AuthorizationCenter, the contract, is kept byte
// for byte in Tests/AppIdioms/Seed. Its Swift code blocks are compiled from
// that file, as the text prints them, against the library as built.

extension SharedCenterTests {
    @Suite struct SeedSnippetTests {
        /// The snippets compile (below); the test checks the sink runs at once with the
        /// initial status, as a Combine subscription to `@Published` does.
        @MainActor @Test func sinkDeliversTheInitialStatusAtOnce() {
            var seen: [AuthorizationStatus] = []
            let cancellable = AuthorizationCenter.shared.$authorizationStatus.sink { seen.append($0) }
            #expect(seen == [.notDetermined])
            cancellable.cancel()
        }

        /// The copy the tests compile is the seed itself, byte for byte.
        @Test(.enabled(if: FileManager.default.fileExists(atPath: SeedReference.shared), "no ../shared/seed beside the package"))
        func theCopyIsTheSeedByteForByte() throws {
            let copy = try #require(FileManager.default.contents(atPath: SeedReference.path))
            let seed = try #require(FileManager.default.contents(atPath: SeedReference.shared))
            #expect(copy == seed, "Tests/AppIdioms/Seed differs from \(SeedReference.shared)")
        }

        @Test func theReferenceTextHasItsFiveSnippets() throws {
            let blocks = try SeedReference.codeBlocks()
            #expect(blocks.count == 5, "\(blocks)")
            #expect(blocks.first == ["let center = AuthorizationCenter.shared"])
            #expect(blocks.contains { $0.contains("case .approved:") && !$0.joined().contains("approvedWithDataAccess") })
        }

        /// As printed, the snippets leave each `case` body to a comment, which
        /// every Swift compiler rejects, Apple's included: that is the only
        /// error the printed text gives.
        @Test(.enabled(if: Swiftc.path != nil, "no swiftc on PATH: the toolchain is missing"), arguments: ["5", "6"])
        func asPrintedOnlyTheCaseBodiesLeftToCommentsAreMissing(languageMode: String) async throws {
            let program = try SeedReference.program(fillingEmptyCases: false)
            let result = try await offload { try SeedReference.compile(program, languageMode: languageMode) }
            let errors = SeedReference.diagnostics(in: result, kind: "error")
            #expect(!result.succeeded)
            #expect(!errors.isEmpty)
            #expect(errors.allSatisfy { $0.contains("must have at least one executable statement") },
                    "Swift \(languageMode) mode:\n\(result.standardError)")
        }

        /// With `break` in each case body left to a comment, the snippets
        /// compile in both language modes, and the only warning is the one the
        /// text itself provokes on any SDK: the handler's `error` is unused.
        /// No warning comes from the library's declarations (a deprecation
        /// Apple's SDK does not give an app supporting iOS 15, a switch that
        /// is not exhaustive).
        @Test(.enabled(if: Swiftc.path != nil, "no swiftc on PATH: the toolchain is missing"), arguments: ["5", "6"])
        func theSnippetsCompileWithoutTheLibrarysWarnings(languageMode: String) async throws {
            let program = try SeedReference.program(fillingEmptyCases: true)
            let result = try await offload { try SeedReference.compile(program, languageMode: languageMode) }
            #expect(result.succeeded, "Swift \(languageMode) mode:\n\(result.standardError)\n\(program)")
            #expect(SeedReference.diagnostics(in: result, kind: "error") == [])
            let warnings = SeedReference.diagnostics(in: result, kind: "warning")
            #expect(warnings.allSatisfy { $0.contains("immutable value 'error' was never used") },
                    "Swift \(languageMode) mode:\n\(result.standardError)")
        }

        /// Code written for Apple's SDK 26.4 compiles to an object in both
        /// language modes with no warning at all (not even "case will never be
        /// executed"), and no code can make a status of `approvedWithDataAccess`.
        @Test(.enabled(if: Swiftc.path != nil, "no swiftc on PATH: the toolchain is missing"), arguments: ["5", "6"])
        func theNewerSDKsDataAccessStatusCompilesWithoutWarnings(languageMode: String) async throws {
            let program = """
                import FamilyControls

                let center = AuthorizationCenter.shared

                func describe(_ status: AuthorizationStatus) -> String {
                    switch status {
                    case .notDetermined: "notDetermined"
                    case .denied: "denied"
                    case .approved: "approved"
                    case .approvedWithDataAccess: "approvedWithDataAccess"
                    }
                }

                let status = center.authorizationStatus
                print(describe(status), status == .approvedWithDataAccess, status != .approvedWithDataAccess)
                if case .approvedWithDataAccess = center.authorizationStatus { print("activity data") }
                let cancellable = center.$authorizationStatus
                    .map { $0 == .approved || $0 == .approvedWithDataAccess }
                    .sink { print($0) }

                """
            let result = try await offload { try SeedReference.compile(program, languageMode: languageMode) }
            #expect(result.succeeded, "Swift \(languageMode) mode:\n\(result.standardError)")
            #expect(!result.standardError.contains("warning:"), "Swift \(languageMode) mode:\n\(result.standardError)")

            let making = program + "let made: AuthorizationStatus = .approvedWithDataAccess\n"
            let refused = try await offload { try SeedReference.compile(making, languageMode: languageMode) }
            #expect(!refused.succeeded)
            #expect(refused.standardError.contains("'approvedWithDataAccess' is unavailable"), "\(refused.standardError)")
        }

        /// The check sees what it looks for: a status switch without a case
        /// for `.approved` is rejected.
        @Test(.enabled(if: Swiftc.path != nil, "no swiftc on PATH: the toolchain is missing"))
        func theCompileCheckRejectsASwitchThatIsNotExhaustive() async throws {
            let program = try SeedReference.program(fillingEmptyCases: true)
                .replacingOccurrences(of: "case .approved:", with: "case .denied where false:")
            let result = try await offload { try SeedReference.compile(program, languageMode: "6") }
            #expect(!result.succeeded)
            #expect(result.standardError.contains("switch must be exhaustive"), "\(result.standardError)")
        }
    }
}

/// Apple's reference text and the program made of its Swift code blocks.
enum SeedReference {
    static let path = "\(packageRoot)/Tests/AppIdioms/Seed/AuthorizationCenter-reference.txt"
    /// The seed as the project's shared folder holds it, beside the package.
    static let shared = "\(packageRoot)/../shared/seed/AuthorizationCenter-reference.txt"

    /// The text's Swift code blocks (```swift or ``` swift, to ```), line for line.
    static func codeBlocks() throws -> [[String]] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [[String]] = []
        var current: [String]?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed.hasPrefix("```"),
               trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces) == "swift" {
                current = []
            } else if trimmed == "```", let block = current {
                blocks.append(block)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// One `main.swift`: the statement blocks in the text's order as top-level
    /// code, the property declaration (`@ObservedObject var center = …`) in a
    /// view, with a stand-in for SwiftUI's `ObservedObject`, which Linux lacks.
    /// `fillingEmptyCases` puts `break` after each `case` label whose body
    /// is only comments, and changes nothing else.
    static func program(fillingEmptyCases: Bool) throws -> String {
        let blocks = try codeBlocks().map { fillingEmptyCases ? fillEmptyCases($0) : $0 }
        let statements = blocks.filter { !($0.first ?? "").hasPrefix("@") }
        let members = blocks.filter { ($0.first ?? "").hasPrefix("@") }
        return """
            import FamilyControls

            \(statements.map { $0.joined(separator: "\n") }.joined(separator: "\n\n"))

            struct SeedView {
            \(members.map { $0.joined(separator: "\n") }.joined(separator: "\n\n"))
            }

            /// Stands in for SwiftUI's `ObservedObject`: holds the object and
            /// subscribes to `objectWillChange`, as SwiftUI does to render again.
            @propertyWrapper
            struct ObservedObject<ObjectType: ObservableObject> {
                let wrappedValue: ObjectType
                private let invalidation: AnyCancellable

                init(wrappedValue: ObjectType) {
                    self.wrappedValue = wrappedValue
                    invalidation = wrappedValue.objectWillChange.sink { _ in }
                }
            }

            """
    }

    /// `block` with `break` after each `case` label followed only by comments
    /// up to the next label or the switch's end.
    static func fillEmptyCases(_ block: [String]) -> [String] {
        func isLabel(_ line: String) -> Bool {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return (trimmed.hasPrefix("case ") || trimmed == "default:") && trimmed.hasSuffix(":")
        }
        var filled: [String] = []
        var index = 0
        while index < block.count {
            filled.append(block[index])
            if isLabel(block[index]) {
                var end = index + 1
                while end < block.count, block[end].trimmingCharacters(in: .whitespaces).hasPrefix("//") { end += 1 }
                filled.append(contentsOf: block[(index + 1)..<end])
                let next = end < block.count ? block[end] : "}"
                if isLabel(next) || next.trimmingCharacters(in: .whitespaces).hasPrefix("}") {
                    filled.append("break")
                }
                index = end
            } else {
                index += 1
            }
        }
        return filled
    }

    /// Compiles `program` as an executable's main file to an object file,
    /// so that the mandatory SIL diagnostics (Swift 6's sending checks) run too.
    static func compile(_ program: String, languageMode: String) throws -> ProcessResult {
        guard let swiftc = Swiftc.path else { throw FixtureError("no swiftc") }
        return try withTemporaryDirectorySync { directory in
            let main = "\(directory)/main.swift"
            try program.write(toFile: main, atomically: true, encoding: .utf8)
            return try run(swiftc, ["-c", "-swift-version", languageMode, "-module-name", "SeedSnippets",
                                    "-I", Swiftc.modules, "-module-cache-path", "\(directory)/cache",
                                    "-o", "\(directory)/main.o"]
                                    + Swiftc.clangModuleMapFlags + [main])
        }
    }

    /// The `kind` ("error", "warning") diagnostics of `result`, one line each.
    static func diagnostics(in result: ProcessResult, kind: String) -> [String] {
        result.standardError.components(separatedBy: "\n").filter { $0.contains(": \(kind): ") }
    }
}
