#if canImport(Glibc)
import Glibc
#endif
internal import CSodium
import SystemKit

extension UpdateManifest {
    private static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW
    private static let fileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

    /// The manifest of the version in the open folder `directory`.
    ///
    /// The walk goes by descriptor only: each folder is opened inside its
    /// parent with `O_NOFOLLOW` and checked to be the inode the parent listed,
    /// so a link, or a folder renamed into place meanwhile, is never followed
    /// out of the tree; a symbolic link is recorded as one, never followed.
    /// Open the version's folder itself with `O_NOFOLLOW` too.
    /// - Throws: ``UpdateSignatureError`` for a special file, a hard link, a
    ///   control character, an entry that changed while read, a bound passed,
    ///   or an entry that cannot be read.
    public static func compute(of directory: FileDescriptor, limits: Limits = Limits())
        throws(UpdateSignatureError) -> UpdateManifest {
        try Sodium.ready()
        var entries: [Entry] = []
        var budget = limits.maximumBytes
        try walk(directory, path: [], depth: 0, limits: limits, budget: &budget, into: &entries)
        return UpdateManifest(entries: entries)
    }

    private static func walk(_ directory: FileDescriptor, path: [UInt8], depth: Int, limits: Limits,
                             budget: inout UInt64, into entries: inout [Entry]) throws(UpdateSignatureError) {
        let listing: [DirectoryEntry]
        do { listing = try directory.readDirectory() } catch { throw .unreadable(path: shown(path), error) }
        for listed in listing {
            let name = listed.name.bytes
            let childPath = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
            if path.isEmpty, name.elementsEqual(signatureFileName.utf8) { continue }
            guard !name.contains(where: isControl) else { throw .controlCharacter(path: shown(childPath)) }
            guard entries.count < limits.maximumEntries else { throw .tooManyEntries(limit: limits.maximumEntries) }
            let status: FileStatus
            do { status = try directory.status(of: listed.name) } catch {
                throw .unreadable(path: shown(childPath), error)
            }
            switch status.type {
            case .directory:
                guard depth < limits.maximumDepth else { throw .tooDeep(path: shown(childPath), limit: limits.maximumDepth) }
                let (child, _) = try open(listed.name, in: directory, flags: directoryFlags, path: childPath, expected: status)
                entries.append(Entry(path: childPath, permissions: status.permissions, kind: .directory))
                try walk(child, path: childPath, depth: depth + 1, limits: limits, budget: &budget, into: &entries)
                child.close()
            case .regular:
                let (file, opened) = try open(listed.name, in: directory, flags: fileFlags, path: childPath, expected: status)
                defer { file.close() }
                guard opened.linkCount == 1 else { throw .hardLink(path: shown(childPath)) }
                let (size, hash) = try digest(of: file, path: childPath, budget: &budget, limit: limits.maximumBytes)
                entries.append(Entry(path: childPath, permissions: status.permissions, kind: .file(size: size, hash: hash)))
            case .symbolicLink:
                let target: [UInt8]
                do { target = try directory.linkTarget(of: listed.name) } catch {
                    // EINVAL: no longer a link.
                    throw error.rawValue == EINVAL ? .changedWhileReading(path: shown(childPath))
                        : .unreadable(path: shown(childPath), error)
                }
                guard !target.contains(where: isControl) else { throw .controlCharacter(path: shown(childPath)) }
                entries.append(Entry(path: childPath, permissions: status.permissions, kind: .symbolicLink(target: target)))
            case .other:
                throw .specialFile(path: shown(childPath))
            }
        }
    }

    /// Opens `name` and checks it is still the file `expected` describes:
    /// same inode, same kind, same permission bits.
    private static func open(_ name: FileName, in directory: FileDescriptor, flags: CInt, path: [UInt8],
                             expected: FileStatus) throws(UpdateSignatureError) -> (FileDescriptor, FileStatus) {
        let opened: FileDescriptor
        let status: FileStatus
        do {
            opened = try directory.openChild(name, flags: flags)
            status = try opened.status()
        } catch {
            // ELOOP, ENOTDIR: it became a link or another kind; ENOENT: renamed away.
            if error.rawValue == ELOOP || error.rawValue == ENOTDIR || error.rawValue == ENOENT {
                throw .changedWhileReading(path: shown(path))
            }
            throw .unreadable(path: shown(path), error)
        }
        guard status.isSameFile(as: expected), status.mode == expected.mode else {
            throw .changedWhileReading(path: shown(path))
        }
        return (opened, status)
    }

    /// The size and BLAKE2b-256 hash of what the open file holds
    /// (`crypto_generichash_init`, `_update`, `_final`), read to its end,
    /// taken from `budget`: past it the walk stops.
    private static func digest(of file: FileDescriptor, path: [UInt8], budget: inout UInt64,
                               limit: UInt64) throws(UpdateSignatureError) -> (UInt64, [UInt8]) {
        // The state is 64-byte aligned, which Swift cannot declare: allocate it.
        let stateMemory = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        defer { stateMemory.deallocate() }
        let state = OpaquePointer(stateMemory)
        _ = crypto_generichash_init(state, nil, 0, 32)
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var size: UInt64 = 0
        while true {
            let count: Int
            do { count = try file.read(into: buffer) } catch { throw .unreadable(path: shown(path), error) }
            if count == 0 { break }
            guard UInt64(count) <= budget else { throw .tooLarge(limit: limit) }
            budget -= UInt64(count)
            size += UInt64(count)
            _ = crypto_generichash_update(state, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(count))
        }
        var hash = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash_final(state, &hash, hash.count)
        return (size, hash)
    }

    private static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7f }

    private static func shown(_ path: [UInt8]) -> String {
        path.isEmpty ? "the version's folder" : DisplayText.sanitized(String(decoding: path, as: UTF8.self))
    }
}
