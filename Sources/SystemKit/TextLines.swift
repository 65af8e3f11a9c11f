/// The lines of a text, split at each line feed, one at a time.
///
/// For the line-based files the Guard reads (familycontrols.conf, an app's
/// desktop entry). Splitting a `String` at the `Character` "\n" would miss
/// every CRLF line ending, which Swift counts as one `Character`, and read a
/// CRLF file as one long line; this splits at the byte. A line keeps its
/// carriage return, for the caller's whitespace trimming to drop. Lines are
/// made as they are asked for, so no array of every line is built.
package struct TextLines: Sequence, IteratorProtocol {
    private let text: Substring
    /// Where the next line starts; nil once the last line has been served.
    private var start: String.Index?

    /// The lines of `text`: as many as it has line feeds, plus one (the text
    /// after the last line feed, empty when the text ends with one).
    package init(_ text: some StringProtocol) {
        self.text = Substring(text)
        start = self.text.startIndex
    }

    /// The next line, without its line feed.
    package mutating func next() -> Substring? {
        guard let lineStart = start else { return nil }
        let bytes = text.utf8
        guard let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            start = nil
            return Substring(bytes[lineStart...])
        }
        start = bytes.index(after: newline)
        // Built from the bytes: a line feed ends a line even inside a CRLF
        // `Character`, where a `String` range would round to the character.
        return Substring(bytes[lineStart..<newline])
    }
}
