import Testing
import UpdateSignature

/// How versions compare: dot-separated numbers, number by number; anything
/// else is never newer.
@Suite struct UpdateVersionTests {
    @Test(arguments: [("2", "1"), ("1.0.1", "1.0"), ("1.10", "1.9"), ("2026.12.4", "2026.2.30"), ("1.0.0.1", "1"),
                      ("100000000000000000000001", "100000000000000000000000")])
    func aHigherNumberIsNewer(_ newer: String, _ older: String) throws {
        #expect(UpdateVersion.isNewer(newer, than: older))
        #expect(!UpdateVersion.isNewer(older, than: newer))
    }

    @Test(arguments: [("1", "1"), ("1.0", "1"), ("1.02", "1.2"), ("01", "1"), ("0", "0.0")])
    func equalVersionsAreNotNewer(_ a: String, _ b: String) throws {
        #expect(try #require(UpdateVersion(a)) == #require(UpdateVersion(b)))
        #expect(!UpdateVersion.isNewer(a, than: b))
        #expect(!UpdateVersion.isNewer(b, than: a))
    }

    @Test(arguments: ["", "v2", "1.0-beta", "1..2", ".1", "1.", "1 ", "+1", "٣", String(repeating: "1", count: 65)])
    func whatIsNotDotSeparatedNumbersCannotBeCompared(_ text: String) {
        #expect(UpdateVersion(text) == nil)
        #expect(!UpdateVersion.isNewer(text, than: "0"))
        #expect(!UpdateVersion.isNewer("99", than: text))
    }

    @Test func noVersionIsNeverNewerNorOlder() {
        #expect(!UpdateVersion.isNewer(nil, than: "1"))
        #expect(!UpdateVersion.isNewer("2", than: nil))
    }

    @Test func theHighestKeepsTheHigherComparableVersion() {
        #expect(UpdateVersion.highest("2", "1") == "2")
        #expect(UpdateVersion.highest("1", "1.1") == "1.1")
        #expect(UpdateVersion.highest(nil, "1") == "1")
        #expect(UpdateVersion.highest("2", "beta") == "2")
        #expect(UpdateVersion.highest(nil, "beta") == nil)
    }
}
