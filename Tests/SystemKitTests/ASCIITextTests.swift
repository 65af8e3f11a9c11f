@testable import SystemKit
import Testing

/// The byte-wise checks configuration parsing uses: ASCII in, everything else
/// refused or kept as it was.
@Suite struct ASCIITextTests {
    @Test func trimmingDropsSpacesTabsAndCarriageReturnsAtBothEndsOnly() {
        #expect(" \t a b \r".trimmingWhitespace() == "a b")
        #expect("abc".trimmingWhitespace() == "abc")
        #expect(" \t\r ".trimmingWhitespace() == "")
        #expect("".trimmingWhitespace() == "")
        #expect("  x".dropFirst().trimmingWhitespace() == "x")
    }

    @Test func trimmingKeepsTextThatIsNotASCIIWhole() {
        #expect("  日本 é ".trimmingWhitespace() == "日本 é")
        #expect("\u{A0}x\u{A0}".trimmingWhitespace() == "\u{A0}x\u{A0}", "a no-break space is not a separator here")
        #expect(" e\u{301} ".trimmingWhitespace() == "e\u{301}")
    }

    @Test func namesAreASCIILettersDigitsAndTheGivenPunctuationOnly() {
        #expect("Guardians2".isASCIIName())
        #expect(!"Guard-ians".isASCIIName())
        #expect("common-auth.d_1".isASCIIName(alsoAllowing: "_.-"))
        #expect(!"caf\u{E9}".isASCIIName(alsoAllowing: "_.-"), "é is a letter, not an ASCII one")
        #expect(!"\u{FF46}oo".isASCIIName(), "a fullwidth f")
        #expect(!"\u{663}".isASCIIName(), "an Arabic-Indic digit")
        #expect(!"a b".isASCIIName())
        #expect("".isASCIIName(), "the callers check emptiness themselves")
    }

    @Test func leadingDigitsAreASCIIOnesAndTheRestIsKept() {
        #expect("90d".splitAtLeadingDigits == ("90", "d"))
        #expect("12 min".splitAtLeadingDigits == ("12", " min"))
        #expect("min".splitAtLeadingDigits == ("", "min"))
        #expect("\u{663}0s".splitAtLeadingDigits == ("", "\u{663}0s"))
        #expect("7\u{301}s".splitAtLeadingDigits == ("7", "\u{301}s"))
    }

    @Test func letterAndDigitBytesAreExactlyASCIIs() {
        let letters = (0...255).map(UInt8.init).filter(\.isASCIILetter)
        #expect(letters == Array(UInt8(ascii: "A")...UInt8(ascii: "Z")) + Array(UInt8(ascii: "a")...UInt8(ascii: "z")))
        let digits = (0...255).map(UInt8.init).filter(\.isASCIIDigit)
        #expect(digits == Array(UInt8(ascii: "0")...UInt8(ascii: "9")))
    }

    @Test func textIsFoundByItsBytesAnywhereAndOnlyWhole() throws {
        #expect("received for user bob: 9 (x)".containsBytes(of: "user bob: 9 ("))
        #expect("ab".containsBytes(of: "ab") && "xab".containsBytes(of: "ab") && "abx".containsBytes(of: "ab"))
        #expect("anything".containsBytes(of: ""))
        #expect(!"a".containsBytes(of: "ab") && !"aab".containsBytes(of: "abb") && !"".containsBytes(of: "a"))
        #expect("caf\u{E9} au lait"[...].containsBytes(of: "\u{E9} au"))
        // Bytes, not characters: "e" and a combining accent are two characters' worth of bytes here.
        #expect("cafe\u{301}".containsBytes(of: "e"))
        let text = "a unix-user:bob and unix-user:carol"[...]
        let first = try #require(text.firstByteRange(of: "unix-user:"))
        #expect(text[first] == "unix-user:" && text[first.upperBound...].hasPrefix("bob"))
        #expect(text[first.upperBound...].firstByteRange(of: "unix-user:").map { text[$0.upperBound...] } == "carol")
        #expect(text.firstByteRange(of: "unix-group:") == nil)
    }
}
