#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Inode flags and the statx immutable attribute")
struct InodeFlagTests {
    @Test func chattrPlusIShowsInStatxAndInTheFlagsAndMinusIClearsBoth() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file")
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            #expect(try directory.extendedStatus(of: FileName("file")).isImmutable == false)

            #expect(try run(["/usr/bin/chattr", "+i", path + "/file"]) == 0)
            #expect(try directory.extendedStatus(of: FileName("file")).isImmutable == true)
            #expect(try FileDescriptor.open(path + "/file", O_RDONLY).flags().contains(.immutable))
            #expect(throws: Errno(EPERM)) { try FileDescriptor.open(path + "/file", O_WRONLY) }

            #expect(try run(["/usr/bin/chattr", "-i", path + "/file"]) == 0)
            #expect(try directory.extendedStatus(of: FileName("file")).isImmutable == false)
            #expect(try !FileDescriptor.open(path + "/file", O_RDONLY).flags().contains(.immutable))
            _ = try FileDescriptor.open(path + "/file", O_WRONLY)
        }
    }

    @Test func setFlagsSetsWhatLsattrAndStatxReportAndClearsIt() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file")
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            let file = try FileDescriptor.open(path + "/file", O_RDONLY)
            let before = try file.flags()
            #expect(!before.contains(.immutable))

            try file.setFlags(before.union(.immutable))
            #expect(try lsattrFlags(path + "/file")?.contains("i") == true)
            #expect(try directory.extendedStatus(of: FileName("file")).isImmutable == true)

            try file.setFlags(before)
            #expect(try lsattrFlags(path + "/file")?.contains("i") == false)
            #expect(try directory.extendedStatus(of: FileName("file")).isImmutable == false)
            #expect(try file.flags() == before)
        }
    }

    @Test func anAppendOnlyFileRefusesWritesThatDoNotAppend() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/log")
            let file = try FileDescriptor.open(path + "/log", O_RDONLY)
            let before = try file.flags()
            try file.setFlags(before.union(.appendOnly))
            #expect(try lsattrFlags(path + "/log")?.contains("a") == true)
            #expect(throws: Errno(EPERM)) { try FileDescriptor.open(path + "/log", O_WRONLY) }
            _ = try FileDescriptor.open(path + "/log", O_WRONLY | O_APPEND)
            try file.setFlags(before)
            #expect(try !file.flags().contains(.appendOnly))
        }
    }

    /// statx decoded by field name must agree with fstatat on every field,
    /// device number included (built with makedev).
    @Test(arguments: ["file", "directory", "link"])
    func statxAgreesWithFstatat(_ name: String) throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file", mode: 0o640)
            #expect(mkdir(path + "/directory", 0o750) == 0)
            #expect(symlink("file", path + "/link") == 0)
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            let extended = try directory.extendedStatus(of: FileName(name))
            let plain = try directory.status(of: FileName(name))
            #expect(extended.status == plain)
            #expect(extended.status.device == (try directory.status()).device)
        }
    }

    @Test func theStatusOfAMissingNameIsENOENT() throws {
        try withScratchDirectory { path in
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            #expect(throws: Errno(ENOENT)) { try directory.extendedStatus(of: FileName("missing")) }
        }
    }

    @Test func aFileSystemWithoutInodeFlagsSaysSo() throws {
        let file = try FileDescriptor.open("/proc/self/status", O_RDONLY)
        let error = #expect(throws: Errno.self) { try file.flags() }
        #expect(error?.meansFlagsUnsupported == true, "\(String(describing: error))")
    }

    @Test("device numbers are combined as glibc's makedev does", arguments: [
        (UInt32(8), UInt32(1), UInt64(0x801)),
        (UInt32(259), UInt32(3), UInt64(0x10303)),
        (UInt32(0x1000), UInt32(0x100), UInt64(0x0000_1000_0010_0000)),
    ])
    func deviceNumbers(major: UInt32, minor: UInt32, expected: UInt64) {
        #expect(FileStatus.device(major: major, minor: minor) == expected)
    }
}
