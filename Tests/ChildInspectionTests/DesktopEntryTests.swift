import ChildInspection
import Testing

@Suite struct DesktopEntryTests {
    /// What the Guard reads from an entry, in one comparable value.
    private func read(_ text: String) -> [String?] {
        let entry = DesktopEntry(parsing: text)
        return [entry.name, entry.program, entry.declaresFamilyControls ? "capable" : nil]
    }

    @Test func readsTheNameTheProgramAndTheCapabilityOfTheMainGroupOnly() {
        let entry = read("""
            [Desktop Entry]
            Type=Application
            Name=FamilyControls Demo
            Exec=familycontrols-demo request --member child
            # The Family Controls capability: without it the Guard refuses the app.
            X-FamilyControls=true
            [Desktop Action other]
            Exec=/tmp/other
            X-FamilyControls=false
            """)
        #expect(entry == ["FamilyControls Demo", "familycontrols-demo", "capable"])
    }

    @Test func everyVersionOfTheMainGroupIsKeptInOrder() {
        let entry = DesktopEntry(parsing: """
            [Desktop Entry]
            Version=1.5
            X-FamilyControls-Version=2.1
            X-FamilyControls-Version=9
            [Desktop Action other]
            X-FamilyControls-Version=3
            """)
        #expect(entry.versions == ["2.1", "9"])
        #expect(DesktopEntry(parsing: "[Desktop Entry]\nVersion=1.5\n").versions.isEmpty)
    }

    @Test func aQuotedProgramKeepsItsSpaces() {
        #expect(read("[Desktop Entry]\nExec=\"/opt/My App/bin/app\" %U\n") == [nil, "/opt/My App/bin/app", nil])
    }

    // Found by the desktop-entry fuzz target (Tests/Fuzz): "\r\n" is one
    // Character in Swift, so a CRLF file read as one line and declared nothing.
    @Test func crlfLineEndingsReadLikeLF() {
        let lf = read("[Desktop Entry]\nName=Plain\nExec=plain\n")
        #expect(lf == ["Plain", "plain", nil])
        #expect(read("[Desktop Entry]\r\nName=Plain\r\nExec=plain\r\n") == lf)
        #expect(read("[Desktop Entry]\r\nExec=\"/opt/a b/app\" %U\r\nX-FamilyControls=true\r\n")
            == [nil, "/opt/a b/app", "capable"])
    }

    // Found by the desktop-entry fuzz target: a combining mark after the quote
    // made one Character of the two, so the quoted program was not seen as
    // quoted, and the Guard read another program than a desktop would.
    @Test func aCombiningMarkAfterAQuoteOrAnEqualsSignIsReadAsBytes() {
        let found = "shm\n\nX-Famiue\n[Desktop Entry]\n@N.memtrue\nName=Thipd\nExec=first\nExec=s+chird\n"
            + "Exec=\r\u{6E2}\u{6E2}Namexec=s+cond\n"
        #expect(read(found) == ["Thipd", "\u{6E2}\u{6E2}Namexec=s+cond", nil])
        #expect(read("[Desktop Entry]\nExec=\"\u{6E2}\u{6E2}Namexec=s+cond\" %U\n") == [nil, "\u{6E2}\u{6E2}Namexec=s+cond", nil])
        #expect(read("[Desktop Entry]\nExec=\u{301}app --flag\nName= \u{301}x\n") == ["\u{301}x", "\u{301}app", nil])
        // A quote inside the first word stays part of the program (the fuzz target's own writer
        // once missed that quote, looking for it by Character, and wrote the program quoted).
        #expect(read("[Desktop Entry]\nExec=\r\u{6E2}\"\u{6E2}Namentrols capabilitye\n") == [nil, "\u{6E2}\"\u{6E2}Namentrols", nil])
    }
}
