import Foundation
import Testing
import TestSupport

/// The code real apps write against Apple's declarations (Tests/AppIdioms:
/// plain-class and async reads, every publisher operator, `@ObservedObject`
/// style, an app's own `@Published`, non-Sendable completion handlers, the
/// newer SDK's cases) typechecks against the library as built, in Swift 5 and
/// Swift 6 language modes.
@Suite(.enabled(if: Swiftc.path != nil, "no swiftc on PATH or beside swift: the toolchain is missing"))
struct AppIdiomTests {
    static let idioms = "\(packageRoot)/Tests/AppIdioms"

    @Test(arguments: ["5", "6"])
    func appCodeTypechecks(languageMode: String) async throws {
        let sources = try Self.swiftFiles(in: "Idioms") + Self.swiftFiles(in: "SampleApp")
        #expect(sources.count >= 8, "the idioms are missing: \(sources)")
        // The compiler runs for seconds: on a thread of its own, never the cooperative pool.
        let result = try await offload { try Swiftc.typecheck(sources, languageMode: languageMode, moduleName: "AppIdioms") }
        #expect(result.succeeded, "Swift \(languageMode) mode:\n\(result.standardError)")
        #expect(!result.standardError.contains("error:"), "\(result.standardError)")
        // Code that compiles without a warning against Apple's declarations does here too.
        #expect(!result.standardError.contains("warning:"), "Swift \(languageMode) mode:\n\(result.standardError)")
    }

    @Test(arguments: ["5", "6"])
    func appTestsWithTheInMemoryGuardTypecheck(languageMode: String) async throws {
        let sources = try Self.swiftFiles(in: "SampleAppTests")
        #expect(!sources.isEmpty)
        let result = try await offload {
            try Swiftc.typecheck(sources, languageMode: languageMode, moduleName: "SampleAppTestsCheck")
        }
        #expect(result.succeeded, "Swift \(languageMode) mode:\n\(result.standardError)")
    }

    @Test func theCheckRejectsCodeThatDoesNotCompile() async throws {
        let result = try await offload {
            try withTemporaryDirectorySync { directory in
                let broken = "\(directory)/Broken.swift"
                try """
                    import FamilyControls
                    func read() -> Int { AuthorizationCenter.shared.authorizationStatus }
                    """.write(toFile: broken, atomically: true, encoding: .utf8)
                return try Swiftc.typecheck([broken], languageMode: "6", moduleName: "Broken")
            }
        }
        #expect(!result.succeeded)
        #expect(result.standardError.contains("error:"), "\(result.standardError)")
    }

    static func swiftFiles(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(idioms)/\(folder)")
            .filter { $0.hasSuffix(".swift") }
            .sorted()
            .map { "\(idioms)/\(folder)/\($0)" }
    }
}

/// The compiler of the toolchain that runs the tests, and the modules the
/// build made.
enum Swiftc {
    /// `swiftc` from PATH (where `swift test` puts the toolchain).
    static let path = tool("swiftc")

    /// A program of the toolchain, from PATH.
    static func tool(_ name: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The build's `Modules` folder: beside the running test bundle, where
    /// `swift build` puts FamilyControls.swiftmodule and the rest.
    static var modules: String {
        var candidates: [String] = []
        if let bundle = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("Modules").path)
        }
        candidates.append("\(packageRoot)/.build/debug/Modules")
        return candidates.first { FileManager.default.fileExists(atPath: "\($0)/FamilyControls.swiftmodule") } ?? candidates[0]
    }

    /// `-Xcc -fmodule-map-file=` for each module map SwiftPM generated for a C
    /// target beside `modules` (CSystem): a Swift module that imports a C
    /// module, even as `internal import`, needs it found by its clients too,
    /// as SwiftPM does for a package that depends on the library.
    static var clangModuleMapFlags: [String] {
        let build = URL(fileURLWithPath: modules).deletingLastPathComponent().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: build)) ?? []
        return entries.filter { $0.hasSuffix(".build") }.sorted()
            .map { "\(build)/\($0)/module.modulemap" }
            .filter { FileManager.default.fileExists(atPath: $0) }
            .flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
    }

    /// Typechecks `sources` as one module against the built modules.
    static func typecheck(_ sources: [String], languageMode: String, moduleName: String) throws -> ProcessResult {
        guard let path else { throw FixtureError("no swiftc") }
        return try withTemporaryDirectorySync { cache in
            try run(path, ["-typecheck", "-swift-version", languageMode, "-parse-as-library",
                           "-module-name", moduleName, "-I", modules, "-module-cache-path", cache]
                           + clangModuleMapFlags + sources)
        }
    }
}
