import Foundation
import Testing

/// The demo app's directory: files, nested and empty directories, a symbolic
/// link, an executable, a setuid helper and a setgid directory, all owned by
/// the child the way an app it installed would be.
enum LockAppTree {
    /// Relative paths of interest to tests.
    static let executable = "bin/demo"
    static let setuidHelper = "bin/helper"
    static let dataFile = "lib/data.txt"
    static let deepFile = "lib/nested/deep/file.bin"
    static let emptyDirectory = "empty"
    static let link = "link"

    /// Builds the tree at `sandbox.app`, plus `extraFiles` small files spread
    /// over a few directories (to make walks take a while).
    static func make(in sandbox: LockSandbox, extraFiles: Int = 0) throws {
        try make(at: sandbox.app, owner: sandbox.child, extraFiles: extraFiles)
    }

    static func make(at app: String, owner child: ChildUser, extraFiles: Int = 0) throws {
        try LockFiles.mkdir(app, 0o755, owner: child)
        for (directory, mode) in [("bin", 0o755), ("lib", 0o755), ("lib/nested", 0o750),
                                  ("lib/nested/deep", 0o700), ("empty", 0o700), ("share", 0o2775)] {
            try LockFiles.mkdir(app + "/" + directory, mode_t(mode), owner: child)
        }
        try LockFiles.write(app + "/" + executable, "#!/bin/sh\necho demo\n", 0o755, owner: child)
        try LockFiles.write(app + "/" + setuidHelper, "#!/bin/sh\nid\n", 0o4755, owner: child)
        try LockFiles.write(app + "/" + dataFile, "data\n", 0o644, owner: child)
        try LockFiles.write(app + "/" + deepFile, String(repeating: "x", count: 4096), 0o600, owner: child)
        try LockFiles.write(app + "/README", "read me\n", 0o640, owner: child)
        try LockFiles.write(app + "/share/icon.png", "png", 0o664, owner: child)
        try LockFiles.symlink("bin/demo", at: app + "/" + link, owner: child)
        for index in 0..<extraFiles {
            let directory = app + "/extra\(index % 8)"
            if !LockFiles.exists(directory) { try LockFiles.mkdir(directory, 0o755, owner: child) }
            try LockFiles.write(directory + "/file\(index)", "\(index)\n", 0o644, owner: child)
        }
    }
}
