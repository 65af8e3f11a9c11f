#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import GuardKit
import GuardProtocol
import SystemKit
import TestSupport
import Testing
@testable import GuardIdentity

/// The inspector as the Guard runs it: the real `familycontrols-inspect`,
/// started as `nobody`, fed hostile bytes, hung, killed, and replaced by
/// programs that answer out of its interface. Each failure fails its one call.
@Suite(.enabled(if: getuid() == 0, "starting the inspector as another user needs root"))
struct InspectorTests {
    /// `bytes` on a pipe's read end, the writer closed: what the Guard hands over.
    private func input(_ bytes: [UInt8]) throws -> FileDescriptor {
        let (read, write) = try FileDescriptor.pipe()
        // A pipe holds 64 KiB: a writer of its own for more.
        let writing = Handed(write)
        let writer = Thread { try? writing.fd.writeAll(bytes); writing.fd.close() }
        writer.start()
        return read
    }

    /// A file holding `bytes`, opened for reading.
    private func file(_ bytes: [UInt8], in directory: String) throws -> FileDescriptor {
        let path = directory + "/input"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return try FileDescriptor.open(path, O_RDONLY)
    }

    static let hostile: [(String, [UInt8])] = [
        ("empty", []),
        ("not UTF-8", [0xFF, 0xFE, 0x0A, 0xC3]),
        ("NUL bytes", Array("[Desktop Entry]\u{0}\nName=\u{0}x\n".utf8)),
        ("one endless line", [UInt8](repeating: UInt8(ascii: "["), count: 300_000)),
        ("random bytes", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }),
        ("a group opened without end", Array("[Application\nname=org.example.Demo\n".utf8)),
    ]

    @Test(arguments: 0..<hostile.count)
    func hostileBytesAreRefusedOrReadAndNeverCrashTheInspector(index: Int) throws {
        let (name, bytes) = Self.hostile[index]
        try withTemporaryDirectorySync { directory in
            for method in ["entry", "info", "maps"] {
                let fd = try file(bytes, in: directory)
                let result: Result<String, InspectionFailure>
                switch method {
                case "entry": result = Result { () throws(InspectionFailure) in "\(try Inspector.standard.desktopEntry(fd))" }
                case "info": result = Result { () throws(InspectionFailure) in "\(try Inspector.standard.flatpakInfo(fd))" }
                default: result = Result { () throws(InspectionFailure) in "\(try Inspector.standard.executableMappings(fd))" }
                }
                // An answer or a refusal: never a crash, a hang or an answer out of the interface.
                if case .failure(.failed(let problem)) = result { Issue.record("\(name), \(method): \(problem)") }
            }
        }
    }

    @Test func aFlatpakInfoFlatpakNeverWritesIsRefusedNamingTheLine() throws {
        let forged = genuineFlatpakInfo + "[Instance]\napp-path=/tmp/elsewhere\n"
        #expect(throws: InspectionFailure.refused(".flatpak-info line 25 starts a group given before")) {
            try Inspector.standard.flatpakInfo(try input(Array(forged.utf8)))
        }
        let info = try Inspector.standard.flatpakInfo(try input(Array(genuineFlatpakInfo.utf8)))
        #expect(info.appID == "org.example.Demo")
        #expect(info.branch == "master")
    }

    @Test func theMapOfALiveProcessIsReadFromTheDescriptorTheGuardOpened() throws {
        let maps = try FileDescriptor.open("/proc/self/maps", O_RDONLY)
        let mappings = try Inspector.standard.executableMappings(maps)
        #expect(mappings.contains { $0.path == "/proc/self/exe".resolvingLinks }, "\(mappings.map(\.path))")
        #expect(mappings.allSatisfy { $0.inode != nil && $0.major != nil })
    }

    /// While it waits for input that never comes: who it runs as, and what it may do.
    @Test func theInspectorRunsAsNobodyWithoutCapabilitiesUnderAFilterAndIsKilledAtItsDeadline() throws {
        let (read, write) = try FileDescriptor.pipe()
        defer { write.close() }
        var inspector = Inspector.standard
        inspector.deadline = .seconds(3)
        let started = ContinuousClock.now
        let outcome = LockedBox<Result<Inspect.DesktopEntry, InspectionFailure>?>(nil)
        let handed = Handed(read)
        let caller = Thread { [inspector] in
            outcome.set(Result { () throws(InspectionFailure) in try inspector.desktopEntry(handed.fd) })
        }
        caller.start()
        var status = ""
        for _ in 0..<200 {
            if let pid = Self.inspectorPIDs(reading: handed.fd).first, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               text.contains("Seccomp:\t2") {
                status = text
                break
            }
            usleep(10_000)
        }
        let nobody = InspectorLocation.nobody.uid
        #expect(status.contains("Uid:\t\(nobody)\t\(nobody)\t\(nobody)\t\(nobody)"), "\(status)")
        let groups = status.split(separator: "\n").first { $0.hasPrefix("Groups:") }
        #expect(groups?.dropFirst("Groups:".count).allSatisfy(\.isWhitespace) == true, "no group: \(status)")
        #expect(status.contains("CapPrm:\t0000000000000000") && status.contains("CapEff:\t0000000000000000"), "\(status)")
        #expect(status.contains("CapAmb:\t0000000000000000"), "\(status)")
        #expect(status.contains("NoNewPrivs:\t1"), "\(status)")
        #expect(status.contains("Seccomp:\t2"), "\(status)")
        while outcome.get() == nil { usleep(20_000) }
        let took = ContinuousClock.now - started
        guard case .failure(.failed(let problem))? = outcome.get() else {
            Issue.record("a hung inspector gave \(String(describing: outcome.get()))")
            return
        }
        #expect(problem.contains("did not answer in time and was killed"), "\(problem)")
        #expect(took >= .seconds(3) && took < .seconds(20), "\(took)")
        #expect(Self.inspectorPIDs(reading: handed.fd).isEmpty, "the hung inspector was reaped")
    }

    @Test func anInspectorKilledMidRequestFailsThatCallAlone() throws {
        let (read, write) = try FileDescriptor.pipe()
        defer { write.close() }
        let outcome = LockedBox<Result<Inspect.DesktopEntry, InspectionFailure>?>(nil)
        let handed = Handed(read)
        let caller = Thread { outcome.set(Result { () throws(InspectionFailure) in try Inspector.standard.desktopEntry(handed.fd) }) }
        caller.start()
        var killed = false
        for _ in 0..<200 where !killed {
            if let pid = Self.inspectorPIDs(reading: handed.fd).first { killed = kill(pid, SIGKILL) == 0 } else { usleep(10_000) }
        }
        #expect(killed)
        while outcome.get() == nil { usleep(20_000) }
        guard case .failure(.failed(let problem))? = outcome.get() else {
            Issue.record("a killed inspector gave \(String(describing: outcome.get()))")
            return
        }
        #expect(problem.contains("SIGKILL") || problem.contains("signal 9"), "\(problem)")
        // The next call is served.
        let entry = try Inspector.standard.desktopEntry(try input(Array("[Desktop Entry]\nName=Next\n".utf8)))
        #expect(entry.name == "Next")
    }

    static let impostors: [(String, String)] = [
        ("answers nothing", "exit 0"),
        ("crashes", "kill -SEGV $$"),
        ("answers garbage", "printf 'not json\\0'"),
        ("answers without the end of its reply", #"printf '{"parameters":{}}'"#),
        ("answers out of its interface", #"printf '{"parameters":{"entry":{"name":3}}}\0'"#),
        ("answers an error not of its interface", #"printf '{"parameters":{},"error":"org.example.Other"}\0'"#),
        ("answers an invalid Flatpak name", #"printf '{"parameters":{"info":{"appID":"../x","appPath":"/a","appCommit":"00","instanceID":"1","branch":"b","arch":"x"}}}\0'"#),
        ("answers a range that is a path", #"printf '{"parameters":{"mappings":[{"range":"../../x","path":"/x"}]}}\0'"#),
    ]

    @Test(arguments: 0..<impostors.count)
    func anInspectorAnsweringOutOfItsInterfaceFailsTheCall(index: Int) throws {
        let (name, script) = Self.impostors[index]
        try withTemporaryDirectorySync { directory in
            let program = directory + "/inspect"
            #expect(FileManager.default.createFile(atPath: program, contents: Data("#!/bin/sh\n\(script)\n".utf8)))
            chmod(program, 0o755)
            chmod(directory, 0o755)
            let inspector = Inspector(executable: program, uid: InspectorLocation.nobody.uid, gid: InspectorLocation.nobody.gid)
            let (first, second, third) = (try input([]), try input([]), try input([]))
            let results: [Result<String, InspectionFailure>] = [
                Result { () throws(InspectionFailure) in "\(try inspector.desktopEntry(first))" },
                Result { () throws(InspectionFailure) in "\(try inspector.flatpakInfo(second))" },
                Result { () throws(InspectionFailure) in "\(try inspector.executableMappings(third))" },
            ]
            for result in results {
                guard case .failure(.failed) = result else {
                    Issue.record("an inspector that \(name) gave \(result)")
                    continue
                }
            }
        }
    }

    /// The inspectors, children of this process, whose standard input is `input`.
    static func inspectorPIDs(reading input: FileDescriptor) -> [pid_t] {
        let me = getpid()
        var own = stat()
        guard fstat(input.rawValue, &own) == 0 else { return [] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let line = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")") else { return false }
            let name = line[line.index(after: open)..<close]
            let fields = line[line.index(close, offsetBy: 2)...].split(separator: " ")
            var standardInput = stat()
            return name.hasPrefix("familycontrols-") && fields.count > 1 && Int32(fields[1]) == me
                && stat("/proc/\(pid)/fd/0", &standardInput) == 0 && standardInput.st_ino == own.st_ino
                && standardInput.st_dev == own.st_dev
        }
    }
}

/// A descriptor handed to one other thread, which alone uses it from then on.
private final class Handed: @unchecked Sendable {
    let fd: FileDescriptor
    init(_ fd: FileDescriptor) { self.fd = fd }
}

private extension String {
    var resolvingLinks: String { (self as NSString).resolvingSymlinksInPath }
}
