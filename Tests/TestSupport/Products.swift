import Foundation

/// The path of a product this package builds (`familyctl`), found beside the
/// running test bundle, where `swift build` puts it.
public func productPath(_ name: String) -> String {
    var candidates: [String] = []
    if let bundle = CommandLine.arguments.first {
        candidates.append(URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path)
    }
    candidates.append("\(packageRoot)/.build/debug/\(name)")
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
}

/// Whether `swift build` has made the product; tests of real processes need it.
public func productExists(_ name: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: productPath(name))
}
