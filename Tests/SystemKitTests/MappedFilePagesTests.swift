#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemKit
import Testing

@Suite("Mapped file pages", .serialized)
struct MappedFilePagesTests {
    /// `RssFile:` of /proc/self/status, in kB.
    private func residentFilePages() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssFile:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first(where: { !$0.isEmpty }).flatMap({ Int($0) })
        else { throw FixtureError("no RssFile in /proc/self/status") }
        return kilobytes
    }

    @Test func releasingLetsGoOfTheProgramsCodeAndItRunsOn() throws {
        let before = try residentFilePages()
        let released = try MappedFilePages.release()
        let after = try residentFilePages()
        #expect(released > 0)
        #expect(after < before, "RssFile \(before) kB before, \(after) kB after")
        // Code, libraries and their relocated tables work as before.
        var counts: [String: Int] = [:]
        for word in "the pages come back when read the pages".split(separator: " ") { counts[String(word), default: 0] += 1 }
        #expect(counts["pages"] == 2)
        #expect(String(format: "%05.1f", 3.5) == "003.5")
        #expect(getpid() > 0)
    }

    /// Measuring first (the Guard says what it lets go of before it does)
    /// lets go of nothing, and names what releasing then lets go of.
    @Test func measuringLetsGoOfNothingAndNamesWhatReleasingLetsGoOf() throws {
        let before = try residentFilePages()
        let measured = MappedFilePages.releasable
        let after = try residentFilePages()
        #expect(measured > 0)
        // Other suites' threads only ever map more; a release would have dropped megabytes.
        #expect(after >= before - 64, "RssFile \(before) kB before measuring, \(after) kB after")
        let released = try MappedFilePages.release()
        // The same objects, unless another thread loaded or unloaded a library in between.
        #expect(abs(released - measured) <= measured / 10, "measured \(measured) bytes, released \(released)")
    }

    /// A private mapping of a file holding a page the process wrote,
    /// read-only since, is not a loaded object's: it keeps what was written.
    @Test func aMappingHoldingAWrittenPageIsKept() throws {
        try withScratchDirectory { directory in
            let path = "\(directory)/mapped"
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            try Data(repeating: 0x61, count: pageSize * 4).write(to: URL(fileURLWithPath: path))
            let file = try FileDescriptor.open(path, O_RDONLY)
            guard let mapped = mmap(nil, pageSize * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.rawValue, 0),
                  mapped != MAP_FAILED else { throw FixtureError("mmap: errno \(errno)") }
            defer { munmap(mapped, pageSize * 4) }
            let bytes = mapped.assumingMemoryBound(to: UInt8.self)
            bytes[pageSize] = 0x7A
            #expect(mprotect(mapped, pageSize * 4, PROT_READ) == 0)
            try MappedFilePages.release()
            #expect(bytes[pageSize] == 0x7A, "the written page was let go and the file's byte came back")
            #expect(bytes[0] == 0x61)
        }
    }

    /// A library loaded from a copy no one else in the process uses: its code
    /// and constants, every page read, are let go of; its relocated tables
    /// (read-only since the loader wrote them) keep what the loader wrote, and
    /// the library runs on.
    @Test func aLoadedLibrarysCodeIsLetGoOfAndItsRelocatedTablesAreKept() throws {
        // The system's libz, loaded first: the copy shares its soname, and a
        // library another test loads meanwhile binds to this one, not the copy.
        let system = try #require(dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL), "no libz.so.1 (Debian: zlib1g)")
        defer { dlclose(system) }
        let maps = String(decoding: try FileDescriptor.open("/proc/self/maps", O_RDONLY).readAll(limit: 16 << 20), as: UTF8.self)
        let original = try #require(maps.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
            .first { $0.hasPrefix("/") && URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("libz.so.1") },
            "the loaded libz.so.1 is not in /proc/self/maps")
        try withScratchDirectory { directory in
            let copy = "\(directory)/libz-copy.so.1"
            // The file itself, not the symbolic link named by its soname.
            try FileManager.default.copyItem(atPath: URL(fileURLWithPath: original).resolvingSymlinksInPath().path, toPath: copy)
            let handle = try #require(dlopen(copy, RTLD_NOW | RTLD_LOCAL), "dlopen: \(String(cString: dlerror()))")
            defer { dlclose(handle) }
            typealias Version = @convention(c) () -> UnsafePointer<CChar>
            let symbol = try #require(dlsym(handle, "zlibVersion"))
            let version = String(cString: unsafeBitCast(symbol, to: Version.self)())
            var mappings = try self.mappings(of: copy)
            for mapping in mappings where mapping.permissions == "r-xp" || mapping.permissions == "r--p" {
                let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
                var sum = 0
                for offset in stride(from: 0, to: Int(mapping.end - mapping.start), by: pageSize) {
                    sum &+= Int(UnsafePointer<UInt8>(bitPattern: mapping.start + UInt(offset))!.pointee)
                }
                _ = sum
            }
            let code = try #require(mappings.first { $0.permissions == "r-xp" })
            let tables = try #require(mappings.first { $0.permissions == "r--p" && $0.anonymous > 0 },
                                      "no relocated read-only tables in \(mappings)")
            #expect(code.resident > 0)
            try MappedFilePages.release()
            mappings = try self.mappings(of: copy)
            #expect(mappings.first { $0.start == code.start }?.resident == 0, "\(mappings)")
            #expect(mappings.first { $0.start == tables.start }?.anonymous == tables.anonymous, "\(mappings)")
            #expect(String(cString: unsafeBitCast(symbol, to: Version.self)()) == version)
        }
    }

    private struct Mapping: CustomStringConvertible {
        var start, end: UInt
        var permissions: String
        var resident = 0, anonymous = 0
        var description: String { "\(String(start, radix: 16)) \(permissions) Rss \(resident) kB Anonymous \(anonymous) kB" }
    }

    /// The mappings of `path` in /proc/self/smaps, with their `Rss:` and `Anonymous:`.
    private func mappings(of path: String) throws -> [Mapping] {
        let smaps = String(decoding: try FileDescriptor.open("/proc/self/smaps", O_RDONLY).readAll(limit: 64 << 20), as: UTF8.self)
        var found: [Mapping] = []
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, let dash = range.firstIndex(of: "-"), let start = UInt(range[..<dash], radix: 16),
               let end = UInt(range[range.index(after: dash)...], radix: 16), fields.count >= 2 {
                inside = fields.last.map(String.init) == path
                if inside { found.append(Mapping(start: start, end: end, permissions: String(fields[1]))) }
            } else if inside, fields.count >= 2, let kilobytes = Int(fields[1]) {
                if fields[0] == "Rss:" { found[found.count - 1].resident = kilobytes }
                if fields[0] == "Anonymous:" { found[found.count - 1].anonymous = kilobytes }
            }
        }
        return found
    }
}
