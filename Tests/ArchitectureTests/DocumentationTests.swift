import Foundation
import Testing
import TestSupport

/// The docs a newcomer reads stay short, their links lead somewhere, and the
/// README's quick start is what CI and the install script really run.
@Suite struct DocumentationTests {
    /// The README and ARCHITECTURE.md, and every guide and note under docs/.
    static func documents() throws -> [String] {
        var paths = ["README.md", "ARCHITECTURE.md"]
        guard let walker = FileManager.default.enumerator(atPath: "\(packageRoot)/docs") else {
            throw FixtureError("no docs/ folder")
        }
        while let entry = walker.nextObject() as? String {
            if entry.hasSuffix(".md") { paths.append("docs/\(entry)") }
        }
        return paths
    }

    /// The targets of the Markdown links `[text](target)` in `text` that are
    /// relative paths: no scheme, no bare anchor; the anchor dropped.
    static func relativeLinks(in text: String) -> [String] {
        var links: [String] = []
        var rest = Substring(text)
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = String(after[..<close]).split(separator: "#", omittingEmptySubsequences: false)[0]
            rest = after[close...]
            if target.isEmpty || target.contains(":") || target.contains(" ") { continue }
            links.append(String(target))
        }
        return links
    }

    @Test func theReadmeFitsOnOnePageAndTheArchitectureStaysShort() throws {
        let readme = try FileManager.default.attributesOfItem(atPath: "\(packageRoot)/README.md")[.size] as? Int
        let architecture = try FileManager.default.attributesOfItem(atPath: "\(packageRoot)/ARCHITECTURE.md")[.size] as? Int
        #expect((readme ?? .max) <= 15 * 1024, "README.md is \(readme ?? -1) bytes")
        #expect((architecture ?? .max) <= 20 * 1024, "ARCHITECTURE.md is \(architecture ?? -1) bytes")
    }

    @Test func everyRelativeLinkInTheDocsLeadsToAFileThatExists() throws {
        let documents = try Self.documents()
        #expect(documents.count >= 7, "docs/ was not read: \(documents)")
        for document in documents {
            let text = try String(contentsOfFile: "\(packageRoot)/\(document)", encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for link in Self.relativeLinks(in: text) {
                let path = ("\(packageRoot)/\(folder)/\(link)" as NSString).standardizingPath
                #expect(FileManager.default.fileExists(atPath: path), "\(document) links to \(link), which does not exist")
            }
        }
    }

    @Test func theLinkReaderFindsRelativeLinksOnly() {
        let text = "[a](docs/a.md) [b](https://example.org) [c](#top) [d](../x.md#part) [e](mailto:x@y)"
        #expect(Self.relativeLinks(in: text) == ["docs/a.md", "../x.md"])
    }

    /// The quick start's two commands are the ones `.ci/run` runs: the install
    /// script it calls, and the line under its "# The README's test command." comment.
    @Test func theReadmesQuickStartNamesTheCommandsCIRuns() throws {
        let readme = try String(contentsOfFile: "\(packageRoot)/README.md", encoding: .utf8)
        let ci = try String(contentsOfFile: "\(packageRoot)/.ci/run", encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let comment = ci.firstIndex(of: "# The README's test command."),
              comment + 1 < ci.count else {
            throw FixtureError(".ci/run has no line under a \"# The README's test command.\" comment")
        }
        let testCommand = ci[comment + 1]
        #expect(!testCommand.isEmpty && !testCommand.hasPrefix("#"))
        let installs = ci.filter { $0.hasPrefix("Config/install.sh") }
        #expect(!installs.isEmpty, ".ci/run no longer calls Config/install.sh")
        #expect(FileManager.default.isExecutableFile(atPath: "\(packageRoot)/Config/install.sh"))
        let commandLines = readme.split(separator: "\n").map(String.init)
        #expect(commandLines.contains { $0.hasPrefix("Config/install.sh ") || $0 == "Config/install.sh" },
                "the README's quick start does not run Config/install.sh")
        #expect(commandLines.contains { $0.hasPrefix(testCommand) }, "the README's quick start does not run `\(testCommand)`")
    }
}
