#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Reading a directory by descriptor")
struct DirectoryReadingTests {
    /// A fresh directory under /tmp, removed (with what is left in it) afterwards.
    private func withDirectory(_ body: (String) throws -> Void) throws {
        var template = Array("/tmp/systemkit-dir-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let path = String(cString: try #require(made))
        defer {
            if let entries = try? FileDescriptor.open(path, O_RDONLY | O_DIRECTORY).readDirectory() {
                for entry in entries {
                    _ = unlink(path + "/" + entry.name.display)
                    _ = rmdir(path + "/" + entry.name.display)
                }
            }
            _ = rmdir(path)
        }
        try body(path)
    }

    @Test func listsEveryEntryWithItsTypeButNotDotAndDotDot() throws {
        try withDirectory { path in
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

    @Test func readsManyEntriesAcrossSeveralCallsAndFromTheStartEachTime() throws {
        try withDirectory { path in
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
        try withDirectory { path in
            #expect(mkdir(path + "/gone", 0o700) == 0)
            let directory = try FileDescriptor.open(path + "/gone", O_RDONLY | O_DIRECTORY)
            #expect(rmdir(path + "/gone") == 0)
            #expect(try directory.readDirectory().isEmpty)
        }
    }

    @Test func aDescriptorThatIsNotADirectoryIsAnError() throws {
        try withDirectory { path in
            let file = try FileDescriptor.open(path + "/plain", O_CREAT | O_RDWR, mode: 0o600)
            #expect(throws: Errno.self) { try file.readDirectory() }
        }
    }
}

@Suite("Core dumps")
struct CoreDumpTests {
    /// `prctl` is reached through a C function pointer; an ordinary process is dumpable.
    @Test func anOrdinaryProcessIsDumpable() {
        #expect(CoreDumps.isDumpable == true)
    }
}
