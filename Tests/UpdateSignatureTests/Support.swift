import Foundation
import SystemKit
import TestSupport
import UpdateSignature

/// A version of an app on disk, as its developer ships it: a program, a data
/// file, a link between them and an empty folder.
struct VersionFolder {
    let path: String

    static func make(in parent: String, name: String = "version") throws -> VersionFolder {
        let path = "\(parent)/\(name)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: "\(path)/bin", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: "\(path)/share", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: "\(path)/empty", withIntermediateDirectories: true)
        try Data("#!/bin/sh\necho app\n".utf8).write(to: URL(fileURLWithPath: "\(path)/bin/app"))
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(path)/bin/app")
        try Data("data of the app\n".utf8).write(to: URL(fileURLWithPath: "\(path)/share/data.txt"))
        try manager.createSymbolicLink(atPath: "\(path)/bin/run", withDestinationPath: "app")
        return VersionFolder(path: path)
    }

    /// The folder, opened as the Guard opens one: a folder, never through a link.
    func open() throws -> FileDescriptor {
        try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    }

    func sign(with key: UpdateSigningKey) throws {
        try UpdateSignature.signInPlace(open(), with: key)
    }

    /// Verifies with `key`, returning the error it is refused with, or nil.
    func refusal(with key: UpdateKey) throws -> UpdateSignatureError? {
        let folder = try open()
        do {
            _ = try UpdateSignature.verify(folder, with: key)
            return nil
        } catch {
            return error
        }
    }

    func write(_ text: String, to relativePath: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(path)/\(relativePath)"))
    }
}

func withVersionFolder<R>(_ body: (VersionFolder, String) throws -> R) throws -> R {
    try withTemporaryDirectorySync { parent in try body(try VersionFolder.make(in: parent), parent) }
}
