import Testing
import ChildInspection

@Suite struct MemoryMapTests {
    private func parse(_ text: String) throws -> [MemoryMapping] {
        try MemoryMap.executableMappings(Array(text.utf8))
    }

    @Test func keepsOnlyExecutableMappingsWithTheirFields() throws {
        let text = """
        55d0c0000000-55d0c0002000 r--p 00000000 fd:01 1234   /usr/bin/app
        55d0c0002000-55d0c0004000 r-xp 00002000 fd:01 1234   /usr/bin/app
        7ffd1000-7ffd3000 r-xp 00000000 00:00 0    [vdso]
        """
        #expect(try parse(text) == [
            MemoryMapping(range: "55d0c0002000-55d0c0004000", device: (0xfd, 1), inode: 1234, path: "/usr/bin/app"),
            MemoryMapping(range: "7ffd1000-7ffd3000", device: (0, 0), inode: 0, path: "[vdso]"),
        ])
    }

    @Test func aPathWithSpacesAndNewlineLookalikesIsOnePath() throws {
        let mappings = try parse("1000-2000 r-xp 0 08:02 7 /home/child/a b  (deleted)\n")
        #expect(mappings.map(\.path) == ["/home/child/a b  (deleted)"])
    }

    @Test func malformedDeviceOrInodeIsNilNotZero() throws {
        let mappings = try parse("1000-2000 r-xp 0 zz:02 7x /lib/x.so\n1000-2000 --xp 0 :: 9 /y\n")
        #expect(mappings.count == 2)
        #expect(mappings[0].device == nil && mappings[0].inode == nil)
        #expect(mappings[1].device == nil && mappings[1].inode == 9)
    }

    @Test func shortLinesGarbageAndInvalidUTF8AreSkippedOrKeptAsText() throws {
        #expect(try parse("x\n\n r-xp\n1 2 3 4\n").isEmpty)
        let mappings = try MemoryMap.executableMappings(Array("1-2 r-xp 0 1:1 5 /p".utf8) + [0xff, 0xfe])
        #expect(mappings.count == 1 && mappings[0].path.hasPrefix("/p"))
    }

    @Test func textLongerThanTheLimitIsRefused() {
        #expect(throws: MemoryMap.Problem.tooLong) {
            try MemoryMap.executableMappings([UInt8](repeating: UInt8(ascii: " "), count: MemoryMap.limit + 1))
        }
    }
}
