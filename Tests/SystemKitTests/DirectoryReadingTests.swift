#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Reading a directory by descriptor")
struct DirectoryReadingTests {
    @Test func listsEveryEntryWithItsTypeButNotDotAndDotDot() throws {
        try withScratchDirectory { path in
            #expect(mkdir(path + "/sub", 0o700) == 0)
            #expect(symlink("sub", path + "/link") == 0)
            let file = open(path + "/file", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(file >= 0)
            close(file)

            let entries = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY).readDirectory()
            let types = Dictionary(uniqueKeysWithValues: entries.map { ($0.name.display, $0.type) })
            #expect(types.count == 3, "\(types.keys.sorted())")
            #expect(types["sub"] == .directory)
            #expect(types["link"] == .symbolicLink)
            #expect(types["file"] == .regular)
        }
    }

    @Test func namesThatAreNotUTF8ComeBackByteForByteWithTheirInodeAndType() throws {
        try withScratchDirectory { path in
            let names: [[UInt8]] = [
                [0x66, 0xff, 0x6f],          // a lone 0xFF
                [0xc3, 0x28],                // a lead byte without its continuation
                Array("%41".utf8),           // looks like an escape
                Array("line\nbreak".utf8),   // a control character
                Array("caf\u{e9}".utf8),     // plain UTF-8
            ]
            for name in names {
                let full = Array(path.utf8) + [0x2f] + name + [0]
                let fd = full.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600) }
                }
                #expect(fd >= 0)
                close(fd)
            }
            #expect(mkfifo(path + "/fifo", 0o600) == 0)

            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            let entries = try directory.readDirectory()
            #expect(Set(entries.map(\.name.bytes)) == Set(names + [Array("fifo".utf8)]))
            for entry in entries {
                let status = try directory.status(of: entry.name)
                #expect(entry.inode == status.inode, "\(entry.name.display)")
                #expect(entry.type == (entry.name.display == "fifo" ? .other : .regular), "\(entry.name.display)")
                // The bytes reach openat unchanged.
                _ = try directory.openChild(entry.name, flags: O_RDONLY | O_NONBLOCK)
            }
        }
    }

    @Test func readsManyEntriesAcrossSeveralCallsAndFromTheStartEachTime() throws {
        try withScratchDirectory { path in
            // Long names so the listing needs more than one 32 KiB getdents64 call.
            let names = (0..<600).map { "entry-\($0)-" + String(repeating: "x", count: 80) }
            for name in names { #expect(mkdir(path + "/" + name, 0o700) == 0) }
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            let first = try directory.readDirectory().map(\.name.display)
            let second = try directory.readDirectory().map(\.name.display)
            #expect(Set(first) == Set(names))
            #expect(first.count == names.count)
            #expect(second == first)
        }
    }

    @Test("a directory removed after it was opened reads as empty, not as an error")
    func removedDirectoryIsEmpty() throws {
        try withScratchDirectory { path in
            #expect(mkdir(path + "/gone", 0o700) == 0)
            let directory = try FileDescriptor.open(path + "/gone", O_RDONLY | O_DIRECTORY)
            #expect(rmdir(path + "/gone") == 0)
            #expect(try directory.readDirectory().isEmpty)
        }
    }

    @Test func aDescriptorThatIsNotADirectoryIsAnError() throws {
        try withScratchDirectory { path in
            let file = try FileDescriptor.open(path + "/plain", O_CREAT | O_RDWR, mode: 0o600)
            #expect(throws: Errno(ENOTDIR)) { try file.readDirectory() }
        }
    }
}
