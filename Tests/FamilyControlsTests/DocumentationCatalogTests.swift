import Foundation
import Testing
import TestSupport

/// FamilyControls.docc is a valid catalog: DocC builds it against the
/// library's symbols with no warning, so every symbol and article link resolves.
@Suite(.enabled(if: Swiftc.tool("docc") != nil && Swiftc.tool("swift-symbolgraph-extract") != nil,
                "docc or swift-symbolgraph-extract is not on PATH: the toolchain has no documentation tools"))
struct DocumentationCatalogTests {
    @Test func theCatalogBuildsWithoutWarnings() async throws {
        let docc = try #require(Swiftc.tool("docc"))
        let extract = try #require(Swiftc.tool("swift-symbolgraph-extract"))
        let swiftc = try #require(Swiftc.path)
        let info = try await run(swiftc, ["-print-target-info"])
        let target = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        let triple = try #require((target?["target"] as? [String: Any])?["triple"] as? String)
        // DocC runs for seconds: on a thread of its own, never the cooperative pool.
        let (symbols, converted) = try await offload {
            try withTemporaryDirectorySync { directory in
                // The public types live in FamilyControlsModel and FamilyControlsCombine,
                // which FamilyControls re-exports.
                let symbols = try run(extract, [
                    "-module-name", "FamilyControls", "-I", Swiftc.modules, "-target", triple,
                    "-output-dir", directory, "-minimum-access-level", "public",
                    "-module-cache-path", "\(directory)/cache",
                    "-experimental-allowed-reexported-modules=FamilyControlsModel,FamilyControlsCombine",
                ] + Swiftc.clangModuleMapFlags)
                guard symbols.succeeded else { return (symbols, nil as ProcessResult?) }
                let converted = try run(docc, [
                    "convert", "\(packageRoot)/Sources/FamilyControls/FamilyControls.docc",
                    "--additional-symbol-graph-dir", directory,
                    "--fallback-display-name", "FamilyControls",
                    "--fallback-bundle-identifier", "org.familycontrols.FamilyControls",
                    "--output-path", "\(directory)/FamilyControls.doccarchive",
                    "--warnings-as-errors",
                ])
                return (symbols, converted)
            }
        }
        #expect(symbols.succeeded, "\(symbols.standardError)")
        let result = try #require(converted)
        #expect(result.succeeded, "\(result.standardOutput)\(result.standardError)")
    }
}
