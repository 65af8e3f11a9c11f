// generate-protocol INPUT OUTPUT: reads a Varlink interface file and writes
// the Swift types for it (SwiftWriter). A method's comment marks what a call
// or a reply carries as secret: `[Secret: FIELD]`, `[Secret reply: FIELD]`
// (carried as SecretBytes, never as a String; each must be a field of it).
//
// generate-protocol --c-header INPUT OUTPUT Method...: writes a C header of
// the names of those methods and of their parameters instead (CHeaderWriter).
import Foundation

@main
enum GenerateProtocol {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let cHeader = arguments.first == "--c-header"
        if cHeader { arguments.removeFirst() }
        guard arguments.count >= 2, cHeader || arguments.count == 2 else {
            fail("usage: generate-protocol INPUT OUTPUT | generate-protocol --c-header INPUT OUTPUT METHOD...", status: 2)
        }
        let (input, output) = (arguments[0], arguments[1])
        guard let text = try? String(contentsOfFile: input, encoding: .utf8) else { fail("cannot read \(input)") }
        let source = URL(fileURLWithPath: input).lastPathComponent
        let written: String
        do throws(InterfaceError) {
            let interface = try Interface(parsing: text)
            written = cHeader ? try CHeaderWriter(interface: interface, source: source, methods: Array(arguments.dropFirst(2))).write()
                              : SwiftWriter(interface: interface, source: source).write()
        } catch {
            fail("\(input): \(error)")
        }
        do {
            try written.write(toFile: output, atomically: true, encoding: .utf8)
        } catch {
            fail("cannot write \(output): \(error)")
        }
    }

    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data("generate-protocol: \(message)\n".utf8))
        exit(status)
    }
}
