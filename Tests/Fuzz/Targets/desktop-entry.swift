// The desktop-entry parser, on `APPID.desktop` files a child writes in their
// own app directory. The inspector reads at most DesktopEntry.sizeLimit
// bytes of valid UTF-8 (familycontrols-inspect's Answers); the same here.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - the entry, written back as a desktop entry, parses to the same entry;
// - only the [Desktop Entry] group counts: another group after it, however
//   it sets the capability and the program, changes nothing;
// - comment lines change nothing;
// - LF and CRLF line endings read alike.

import ChildInspection

@c(LLVMFuzzerTestOneInput)
public func fuzzDesktopEntry(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { input in
        guard input.count <= DesktopEntry.sizeLimit, let text = String(validating: input, as: UTF8.self) else { return }
        // The bound DesktopEntry states: it keeps one line at a time.
        let entry = withinHeapBound(4 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            DesktopEntry(parsing: text)
        }

        let written = write(entry)
        require(DesktopEntry(parsing: written) == entry, "\(entry) written as \(written.debugDescription) reads differently")

        let separated = text.utf8.last == UInt8(ascii: "\n") || text.isEmpty ? text : text + "\n"
        let action = "[Desktop Action evil]\nExec=/tmp/evil\nX-FamilyControls=\(entry.declaresFamilyControls ? "false" : "true")\nName=Evil\n"
        require(DesktopEntry(parsing: separated + action) == entry, "a group after [Desktop Entry] changed the entry")
        require(DesktopEntry(parsing: "# X-FamilyControls=true\n" + text) == entry, "a comment line changed the entry")

        if !text.utf8.contains(UInt8(ascii: "\r")) {
            let crlf = String(decoding: text.utf8.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }, as: UTF8.self)
            require(DesktopEntry(parsing: crlf) == entry, "CRLF line endings read differently from LF")
        }
    }
    return 0
}

/// A desktop entry that says what `entry` says and nothing more.
private func write(_ entry: DesktopEntry) -> String {
    var text = "[Desktop Entry]\n"
    if let name = entry.name { text += "Name=\(name)\n" }
    if let program = entry.program {
        // Quoted unless it holds a quote, which only the unquoted form allows.
        // Bytes: a quote and the combining mark after it are one Character.
        text += program.utf8.contains(UInt8(ascii: "\"")) ? "Exec=\(program) %U\n" : "Exec=\"\(program)\" %U\n"
    }
    if entry.declaresFamilyControls { text += "X-FamilyControls=true\n" }
    return text
}
