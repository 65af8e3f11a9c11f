import SystemKit
import Testing

@Suite("Text shown to people: invisible and line-breaking characters are escaped")
struct DisplayTextTests {
    @Test("a format, line or paragraph separator, or Hangul filler character is escaped, not shown", arguments: [
        (0x061C, "Arabic letter mark"),
        (0x2028, "line separator"),
        (0x2029, "paragraph separator"),
        (0x00AD, "soft hyphen"),
        (0x115F, "Hangul choseong filler"),
        (0x1160, "Hangul jungseong filler"),
        (0x3164, "Hangul filler"),
        (0xFFA0, "halfwidth Hangul filler"),
        (0x180E, "Mongolian vowel separator"),
        (0x200B, "zero width space"),
        (0x2066, "left-to-right isolate"),
        (0x202E, "right-to-left override"),
        (0xFEFF, "zero width no-break space"),
        (0xE0041, "tag Latin capital letter A"),
    ] as [(UInt32, String)])
    func hiddenCharacterIsEscaped(_ value: UInt32, _ name: String) throws {
        let scalar = try #require(Unicode.Scalar(value))
        let digits = String(value, radix: 16, uppercase: true)
        let escape = "\\u{" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "}"
        #expect(DisplayText.sanitized("org.example\(Character(scalar))App") == "org.example\(escape)App", "\(name)")
    }

    @Test("letters of any script, marks and ordinary spaces are shown as they are", arguments: [
        "Démo", "한글", "日本語", "Ελληνικά", "עברית", "العربية", "e\u{301}", "two words", "no\u{A0}break",
    ])
    func visibleTextIsKept(_ text: String) {
        #expect(DisplayText.sanitized(text) == text)
    }
}
