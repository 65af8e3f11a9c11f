import Foundation

/// Makes a fresh directory under /tmp (short, so socket paths fit in
/// `sun_path`), runs `body`, and removes the directory.
public func withTemporaryDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
    let path = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Makes a fresh directory under /tmp; the caller removes it.
public func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/fc.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
    guard made != nil else { throw FixtureError("mkdtemp failed: errno \(errno)") }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The package's top folder (where Package.swift is), found from this file's path.
public let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            return url.path
        }
    }
    return FileManager.default.currentDirectoryPath
}()

/// A pam.d folder holding the shipped service files, for `pam_start_confdir`.
/// Their `@include common-*` lines fall back to the system's `/etc/pam.d`.
public func withShippedPAMDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
    try await withTemporaryDirectory { directory in
        let fm = FileManager.default
        for service in ["familycontrols-guardian", "familycontrols-individual"] {
            try fm.copyItem(atPath: "\(packageRoot)/pam.d/\(service)", toPath: "\(directory)/\(service)")
        }
        return try await body(directory)
    }
}

/// The synchronous form of ``withTemporaryDirectory(_:)``.
public func withTemporaryDirectorySync<R>(_ body: (String) throws -> R) throws -> R {
    let path = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
