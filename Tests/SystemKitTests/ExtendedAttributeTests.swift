import Foundation
import SystemKit
import Testing
import TestSupport

@Suite("Extended attributes by directory descriptor, and the account list")
struct ExtendedAttributeTests {
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/setcap"), "needs root and setcap"))
    func aProgramsCapabilityIsReadWithoutFollowingALink() throws {
        try withScratchDirectory { path in
            #expect(FileManager.default.createFile(atPath: path + "/tool", contents: Data([0x7f])))
            chmod(path + "/tool", 0o711)
            #expect(symlink("tool", path + "/link") == 0)
            let folder = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            #expect(try folder.extendedAttribute("security.capability", of: FileName("tool"), limit: 64) == nil)

            let set = try run("/usr/sbin/setcap", ["cap_linux_immutable+ep", path + "/tool"]) as ProcessResult
            try #require(set.succeeded, "\(set.standardError)")
            let value = try #require(try folder.extendedAttribute("security.capability", of: FileName("tool"), limit: 64))
            #expect(value == [0x01, 0, 0, 0x02, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            #expect(try folder.extendedAttribute("security.capability", of: FileName("link"), limit: 64) == nil,
                    "a link's own attributes, not its target's")
            #expect(throws: Errno.self) { try folder.extendedAttribute("security.capability", of: FileName("tool"), limit: 4) }
            #expect(throws: Errno.self) { try folder.extendedAttribute("security.capability", of: FileName("absent"), limit: 64) }
        }
    }

    @Test func theAccountListHasEveryAccountAndSaysWhenItStoppedShort() throws {
        let listed = try UserDatabase.allUsers(limit: 1_000_000)
        #expect(listed.complete)
        #expect(listed.accounts.contains { $0.name == "root" && $0.uid == 0 })
        let me = try #require(try UserDatabase.user(id: getuid()))
        #expect(listed.accounts.contains(me))
        let first = try UserDatabase.allUsers(limit: 1)
        #expect(first.accounts.count == 1 && !first.complete)
        #expect(first.accounts == Array(listed.accounts.prefix(1)), "each listing starts from the beginning")
    }

    @Test func aNoSUIDMountIsToldFromAnOrdinaryOne() throws {
        try withScratchDirectory { path in
            let found = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY).isOnNoSUIDMount()
            #expect(found == false)
        }
        var flags = statvfs()
        if statvfs("/proc", &flags) == 0 {
            let expected = flags.f_flag & UInt(ST_NOSUID) != 0
            let found = try FileDescriptor.open("/proc", O_RDONLY | O_DIRECTORY).isOnNoSUIDMount()
            #expect(found == expected)
        }
    }
}
