#if canImport(Glibc)
import FlatpakNames
import Glibc
#endif
import SystemKit

/// The journal of one Flatpak move: a file in the journal folder whose
/// first line names the move (uid, home, app ID, arch, branch, commit,
/// tab-separated) and each later line one step done, written and synced
/// (`fsync(2)`) before the next step runs.
struct MoveJournal {
    let path: String
    let uid: UInt32
    let home: String
    let appID: String
    let arch: String
    let branch: String
    let commit: String
    var steps: [String] = []

    /// At most this many bytes are read back from a journal.
    static let sizeLimit = 16 * 1024

    static func create(in directory: String, request: FlatpakMoveRequest) throws(FlatpakMoveError) -> MoveJournal {
        guard !request.home.utf8.contains(where: { $0 == 9 || $0 == 10 }) else { throw .invalidRequest("the home's path holds a tab or a newline") }
        _ = mkdir(directory, 0o700)
        let path = "\(directory)/\(request.uid)-\(request.appID)-\(request.arch)-\(request.branch).move"
        let journal = MoveJournal(path: path, uid: request.uid, home: request.home, appID: request.appID, arch: request.arch,
                                  branch: request.branch, commit: request.commit)
        let header = [String(request.uid), request.home, request.appID, request.arch, request.branch, request.commit]
            .joined(separator: "\t")
        try journal.write(header, flags: O_CREAT | O_EXCL)
        return journal
    }

    func record(_ step: String) throws(FlatpakMoveError) {
        try write(step, flags: O_APPEND)
    }

    private func write(_ line: String, flags: CInt) throws(FlatpakMoveError) {
        do {
            let file = try FileDescriptor.open(path, O_WRONLY | O_NOFOLLOW | flags, mode: 0o600)
            try file.writeAll(Array((line + "\n").utf8))
            guard fsync(file.rawValue) == 0 else { throw Errno.current("fsync") }
        } catch {
            throw .journal("\(path): \(error)")
        }
    }

    func remove() {
        unlink(path)
    }

    /// Every journal left in `directory`; one that cannot be read is skipped and left for an administrator.
    static func all(in directory: String) -> [MoveJournal] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var journals: [MoveJournal] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".move") else { continue }
            let path = "\(directory)/\(name)"
            guard let bytes = try? FileDescriptor.readFile(path, limit: sizeLimit) else { continue }
            let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
            guard let header = lines.first else { continue }
            let fields = header.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let uid = UInt32(fields[0]), FlatpakNames.isValidAppID(fields[2]),
                  FlatpakNames.isValidArch(fields[3]), FlatpakNames.isValidBranch(fields[4]) else { continue }
            journals.append(MoveJournal(path: path, uid: uid, home: fields[1], appID: fields[2], arch: fields[3],
                                        branch: fields[4], commit: fields[5], steps: Array(lines.dropFirst())))
        }
        return journals
    }
}
