import GuardKit
import SystemKit
import Testing

@Suite("What a lock does to one entry's mode")
struct LockPolicyTests {
    struct Case: Sendable, CustomStringConvertible {
        var kind: LockedEntry.Kind
        var uid: UInt32
        var mode: UInt32
        var wasImmutable = false
        var locked: UInt32
        var description: String { "\(kind) uid \(uid) mode \(String(mode, radix: 8)) -> \(String(locked, radix: 8))" }
    }

    @Test("write bits go, setuid goes when the owner changes, nothing is added", arguments: [
        Case(kind: .regular, uid: 1000, mode: 0o644, locked: 0o444),
        Case(kind: .regular, uid: 1000, mode: 0o4755, locked: 0o555),
        Case(kind: .regular, uid: 1000, mode: 0o2755, locked: 0o2555),
        Case(kind: .regular, uid: 0, mode: 0o4755, locked: 0o4555),
        Case(kind: .regular, uid: 1000, mode: 0o600, locked: 0o400),
        Case(kind: .regular, uid: 1000, mode: 0o000, locked: 0o000),
        Case(kind: .directory, uid: 1000, mode: 0o1777, locked: 0o1555),
        Case(kind: .directory, uid: 1000, mode: 0o2775, locked: 0o2555),
        Case(kind: .symlink, uid: 1000, mode: 0o777, locked: 0o777),
        Case(kind: .regular, uid: 1000, mode: 0o666, wasImmutable: true, locked: 0o666),
    ])
    func lockedMode(_ example: Case) {
        let entry = LockedEntry(relativePath: "x", kind: example.kind, device: 1, inode: 1,
                                uid: example.uid, gid: 100, mode: example.mode, wasImmutable: example.wasImmutable)
        #expect(entry.lockedMode == example.locked)
        #expect(entry.lockedMode & ~example.mode == 0)
        #expect(entry.lockedUID == (example.wasImmutable ? example.uid : 0))
    }

    @Test("names that are not UTF-8, or contain '%', display losslessly", arguments: [
        ([0x61, 0x62], "ab"),
        ([0x61, 0xff, 0x62], "a%FFb"),
        ([0x25, 0x41], "%25A"),
        ([0xc3, 0xa9], "é"),
        ([0xc3], "%C3"),
    ] as [([UInt8], String)])
    func fileNameDisplay(_ bytes: [UInt8], _ expected: String) {
        #expect(FileName(bytes: bytes).display == expected)
    }
}
