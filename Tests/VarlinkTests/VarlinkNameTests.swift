import Testing
@testable import Varlink

@Suite("Varlink names and interface descriptions")
struct VarlinkNameTests {
    @Test("valid interface names", arguments: [
        "org.varlink.service", "com.example.family-controls", "io.systemd.Journal", "a.b", "org.example.v2", "org.0day",
    ])
    func validInterfaceName(name: String) {
        #expect(VarlinkName.isValidInterfaceName(name))
    }

    @Test("invalid interface names", arguments: [
        "", "org", "org.", ".org", "org..example", "9org.example", "-org.example", "org-.example",
        "org.example-", "org.ex ample", "org.ex_ample", "org/example", String(repeating: "a.", count: 128) + "a",
    ])
    func invalidInterfaceName(name: String) {
        #expect(!VarlinkName.isValidInterfaceName(name))
    }

    @Test func memberNamesStartUppercase() {
        #expect(VarlinkName.isValidMemberName("GetInfo"))
        #expect(VarlinkName.isValidMemberName("V2"))
        #expect(!VarlinkName.isValidMemberName("getInfo"))
        #expect(!VarlinkName.isValidMemberName("Get_Info"))
        #expect(!VarlinkName.isValidMemberName(""))
    }

    @Test func splitsQualifiedNames() {
        let parts = VarlinkName.split(qualified: "org.example.test.Echo")
        #expect(parts?.interface == "org.example.test")
        #expect(parts?.member == "Echo")
        #expect(VarlinkName.split(qualified: "Echo") == nil)
        #expect(VarlinkName.split(qualified: "org.example.echo") == nil)
    }

    @Test func readsTheNameAndMethodsOfADescription() throws {
        let description = try VarlinkInterfaceDescription(TestService.interfaceText)
        #expect(description.name == "org.example.test")
        #expect(description.methods == [
            "Echo", "Add", "Count", "Converse", "Answer", "WhoAmI", "Flood", "Hang", "Park", "Unimplemented",
        ])
        #expect(description.text == TestService.interfaceText)
    }

    @Test func theStandardInterfaceDescribesItself() throws {
        let description = try VarlinkInterfaceDescription(VarlinkServiceInterface.text)
        #expect(description.name == "org.varlink.service")
        #expect(description.methods == ["GetInfo", "GetInterfaceDescription"])
    }

    @Test func fieldsCalledMethodAreNotMethods() throws {
        let description = try VarlinkInterfaceDescription("""
            interface org.example.fields
            # method Commented() -> ()
            type Entry (method: string, interface: string)
            error Failed (method: string)
            method Real(method: string) -> (method: string)
            """)
        #expect(description.methods == ["Real"])
    }

    // Found by the interface-description fuzz target (Tests/Fuzz): a word can
    // be as long as the text, and the error quoted it whole.
    @Test func anInvalidNameIsQuotedShortInTheError() {
        let text = "interface\u{0}org" + String(repeating: "-", count: 49) + "1e" + String(repeating: "-", count: 99) + "1e"
            + String(repeating: "-", count: 86) + "(kind: (one, two, three))\nmethod Call(inner: Inrg1example6x ) ->"
            + "\u{1}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}) ()\nethod Call(inner: Inrg1example6x ) ->\u{1}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}) ()\n"
        let name = "org" + String(repeating: "-", count: 49) + "1e" + String(repeating: "-", count: 99) + "1e"
            + String(repeating: "-", count: 86)
        #expect(throws: VarlinkInterfaceDescriptionError.invalidInterfaceName(name)) { try VarlinkInterfaceDescription(text) }
        #expect(VarlinkInterfaceDescriptionError.invalidInterfaceName(name).description
            == "\"\(name.prefix(80))\" is not a valid interface name")
        let method = "M" + String(repeating: "x", count: 10_000)
        #expect(VarlinkInterfaceDescriptionError.duplicateMethod(method).description.utf8.count < 120)
    }

    static let invalidDescriptions: [(String, VarlinkInterfaceDescriptionError)] = [
        ("method Ping() -> ()", .missingInterfaceKeyword),
        ("interface org.example.a\ninterface org.example.b", .repeatedInterfaceKeyword),
        ("interface", .missingName(after: "interface")),
        ("interface Example", .invalidInterfaceName("Example")),
        ("interface org.example.x\nmethod ping() -> ()", .invalidMethodName("ping")),
        ("interface org.example.x\nmethod Ping() -> ()\nmethod Ping() -> ()", .duplicateMethod("Ping")),
    ]

    @Test("rejects descriptions routing cannot use", arguments: invalidDescriptions)
    func rejectsDescription(text: String, expected: VarlinkInterfaceDescriptionError) {
        #expect(throws: expected) { try VarlinkInterfaceDescription(text) }
    }
}
