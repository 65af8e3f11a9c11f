import LockEngine
import SystemKit
import Testing

@Suite("Which entries a lock takes, and how names are shown")
struct LockPolicyTests {
    struct Case: Sendable, CustomStringConvertible {
        var uid: UInt32
        var type: UInt32
        var links: UInt64
        var taken: Bool
        var description: String { "uid \(uid) type \(String(type, radix: 8)) links \(links) -> \(taken ? "taken" : "refused")" }
    }

    @Test("the child's entries and root's are taken; another user's never, nor root's files linked elsewhere", arguments: [
        Case(uid: 1000, type: 0o100000, links: 1, taken: true),
        Case(uid: 1000, type: 0o100000, links: 3, taken: true),
        Case(uid: 1000, type: 0o040000, links: 2, taken: true),
        Case(uid: 0, type: 0o100000, links: 1, taken: true),
        Case(uid: 0, type: 0o040000, links: 5, taken: true),
        Case(uid: 0, type: 0o100000, links: 2, taken: false),
        Case(uid: 1001, type: 0o100000, links: 1, taken: false),
        Case(uid: 1001, type: 0o040000, links: 2, taken: false),
        Case(uid: 1001, type: 0o120000, links: 1, taken: false),
    ])
    func refusals(_ example: Case) {
        let status = FileStatus(device: 1, inode: 1, mode: example.type | 0o644, uid: example.uid, gid: 100,
                                linkCount: example.links)
        let refusal = LockPolicy(childUID: 1000).refusal(for: status)
        #expect((refusal == nil) == example.taken, "\(refusal ?? "taken")")
    }

    @Test("once the account is gone, only root's entries are taken")
    func goneAccount() {
        let childs = FileStatus(device: 1, inode: 1, mode: 0o100644, uid: 1000, gid: 100, linkCount: 1)
        #expect(LockPolicy(childUID: nil).refusal(for: childs) != nil)
    }

    @Test("names that are not UTF-8, contain '%' or control characters display losslessly and come back", arguments: [
        ([0x61, 0x62], "ab"),
        ([0x61, 0xff, 0x62], "a%FFb"),
        ([0x25, 0x41], "%25A"),
        ([0xc3, 0xa9], "é"),
        ([0xc3], "%C3"),
        ([0x1b, 0x5b, 0x32, 0x4a], "%1B[2J"),
        ([0x61, 0x0a, 0x62], "a%0Ab"),
        ([0x7f], "%7F"),
        ([0xc2, 0x9b, 0x33, 0x31, 0x6d], "%C2%9B31m"),
        ([0xc2, 0xb0], "°"),
    ] as [([UInt8], String)])
    func fileNameDisplay(_ bytes: [UInt8], _ expected: String) {
        #expect(FileName(bytes: bytes).display == expected)
        #expect(FileName(display: expected)?.bytes == bytes)
    }

    @Test("a display form that is not one decodes to nothing", arguments: ["%", "%4", "%ZZ", "a%2Fb", "%00"])
    func invalidDisplay(_ text: String) {
        #expect(FileName(display: text) == nil)
    }

    @Test("text shown to people escapes control and formatting characters, and is cut at its limit", arguments: [
        ("Demo", "Demo"),
        ("\u{1b}[31mRed", "\\x1B[31mRed"),
        ("line\nbreak", "line\\x0Abreak"),
        ("evil\u{202e}txt.exe", "evil\\u{202E}txt.exe"),
        ("zero\u{200b}width", "zero\\u{200B}width"),
        ("c1\u{9b}", "c1\\x9B"),
    ])
    func displayText(_ text: String, _ expected: String) {
        #expect(DisplayText.sanitized(text) == expected)
    }

    @Test("a long name is cut with an ellipsis")
    func displayLimit() {
        #expect(DisplayText.sanitized(String(repeating: "a", count: 10), limit: 4) == "aaaa…")
    }
}
