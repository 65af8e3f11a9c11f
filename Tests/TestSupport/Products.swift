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

/// Copies the program at `source` to `destination`, keeping its mode, in a
/// `cp` process of its own.
///
/// The test process never holds a writable descriptor of a program it will
/// run: a process that another test forks at that moment inherits the
/// descriptor until its exec, and running the program meanwhile fails with
/// ETXTBSY ("Text file busy", seen once in a full run).
public func copyProgram(_ source: String, to destination: String) throws {
    let copied = try run("/bin/cp", ["--preserve=mode", "--remove-destination", "--", source, destination])
    guard copied.succeeded else { throw FixtureError("cannot copy \(source): \(copied.standardError)") }
}

/// Writes `text` (a script) to `destination` with `mode`, in a process of its
/// own, for the reason ``copyProgram(_:to:)`` gives.
public func writeProgram(_ text: String, to destination: String, mode: mode_t = 0o755) throws {
    let written = try run("/bin/sh", ["-c", "rm -f -- \"$1\" && cat > \"$1\" && chmod \(String(mode, radix: 8)) -- \"$1\"",
                                       "sh", destination], input: text)
    guard written.succeeded else { throw FixtureError("cannot write \(destination): \(written.standardError)") }
}
