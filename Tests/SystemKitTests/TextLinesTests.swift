import SystemKit
import Testing

@Suite struct TextLinesTests {
    private func lines(_ text: String) -> [String] { TextLines(text).map(String.init) }

    @Test func splitsAtEveryLineFeedAndKeepsTheEmptyLines() {
        #expect(lines("") == [""])
        #expect(lines("a") == ["a"])
        #expect(lines("a\n") == ["a", ""])
        #expect(lines("\n\na\n\nb") == ["", "", "a", "", "b"])
    }

    @Test func aCRLFLineEndsAtItsLineFeedAndKeepsItsCarriageReturn() {
        // Swift's Character "\r\n" is not "\n": splitting Characters would make one line.
        #expect(lines("[A]\r\nb=c\r\n") == ["[A]\r", "b=c\r", ""])
        #expect(lines("[A]\r\nb=c").map { $0.trimmingWhitespace() } == ["[A]", "b=c"])
        #expect(lines("x\ry\n") == ["x\ry", ""])
    }

    @Test func linesKeepTextThatIsNotASCII() {
        #expect(lines("é\n\u{301}x\n日本") == ["é", "\u{301}x", "日本"])
    }
}
