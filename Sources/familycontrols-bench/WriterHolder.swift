// A process of the child's that holds every file of a tree open for writing,
// for the lock benchmark's figure of a lock in which every file has a writer
// (each one then has to be named in the lock's reasons).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemKit

/// `familycontrols-bench hold-writers TREE UID GID`: opens every regular file
/// under TREE for writing as UID:GID, prints how many it holds, and holds them
/// until its standard input ends.
func runWriterHolder(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3, let uid = UInt32(arguments[1]), let gid = UInt32(arguments[2]) else {
        writeToStandardError("usage: familycontrols-bench hold-writers TREE UID GID\n")
        return 64
    }
    do {
        // Both while still root: the limit stays when the ids change, and the
        // tree's own parent (a private temporary directory) is root's alone.
        _ = try OpenFileLimit.raise(toAtLeast: Int.max)
        let tree = try FileDescriptor.open(arguments[0], O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        guard setgroups(0, nil) == 0, setgid(gid) == 0, setuid(uid) == 0 else { throw Errno.current("setuid \(uid)") }
        var held: [FileDescriptor] = []
        try holdFiles(in: tree, into: &held)
        let count = Array("\(held.count)\n".utf8)
        guard write(1, count, count.count) == count.count else { throw Errno.current("write") }
        close(1)  // the parent reads the count to its end
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        withExtendedLifetime(held) {}
        return 0
    } catch {
        writeToStandardError("familycontrols-bench hold-writers: \(error)\n")
        return 1
    }
}

private func holdFiles(in directory: FileDescriptor, into held: inout [FileDescriptor]) throws {
    for entry in try directory.readDirectory() {
        let type = try entry.type ?? directory.status(of: entry.name).type
        switch type {
        case .directory:
            try holdFiles(in: directory.openChild(entry.name, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW), into: &held)
        case .regular:
            held.append(try directory.openChild(entry.name, flags: O_WRONLY | O_APPEND | O_NOFOLLOW))
        default:
            break
        }
    }
}

/// The parent's side: starts `hold-writers` over a tree and stops it.
final class WriterHolder {
    private let process = Process()
    private let input = Pipe()
    /// How many files the holder has open for writing.
    let held: Int

    var pid: Int32 { process.processIdentifier }

    /// Starts the holder and waits until every file is open.
    init(tree: String, owner: UserAccount) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: try Self.ownProgram())
        process.arguments = ["hold-writers", tree, "\(owner.uid)", "\(owner.gid)"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        output.fileHandleForWriting.closeFile()
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let held = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            input.fileHandleForWriting.closeFile()
            process.waitUntilExit()
            throw WriterHolderError(description: "hold-writers did not start (exit status \(process.terminationStatus))")
        }
        self.held = held
    }

    /// Lets every file go and waits for the holder to end.
    func stop() {
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }

    private static func ownProgram() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Errno.current("readlink /proc/self/exe") }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

private struct WriterHolderError: Error, CustomStringConvertible {
    let description: String
}
