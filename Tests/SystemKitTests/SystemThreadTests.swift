#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Testing

@Suite("System threads")
struct SystemThreadTests {
    /// What the kernel shows for the calling thread (`ps -L`, core dumps).
    private static func ownName() -> String? {
        guard let file = try? FileDescriptor.open("/proc/thread-self/comm", O_RDONLY) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 64)
        guard let count = try? bytes.withUnsafeMutableBytes({ try file.read(into: $0) }) else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self).trimmingSuffix("\n")
    }

    @Test(arguments: [
        ("guard-loop", "guard-loop"),
        ("a-name-longer-than-fifteen-bytes", "a-name-longer-t"),
    ])
    func aThreadCarriesItsNameCutToFifteenBytes(name: String, shown: String) throws {
        let seen = Mutex<String?>(nil)
        let thread = try SystemThread.spawn(name: name) {
            let own = Self.ownName()
            seen.withLock { $0 = own }
        }
        thread.join()
        #expect(seen.withLock { $0 } == shown)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
