// The interface-description reader, on the Varlink IDL a service serves
// (Config/org.familycontrols.guard.varlink, embedded at build time). It reads
// the interface name and the method names, which is all routing needs.
//
// The reader keeps a list of the top-level words; its heap bound, stated with
// the type, is a multiple of the text. The text itself is not bounded (it is
// the service's own); inputs here are as long as libFuzzer's -max_len.
//
// Properties, for every input:
// - reading stays within its heap bound;
// - a failure is a VarlinkInterfaceDescriptionError whose description is one
//   short line;
// - a description read keeps its text as given, and its name and methods
//   follow the naming rules;
// - written again as a minimal description (the interface line and one
//   method line per method), it reads to the same name and methods;
// - comments, and fields called `method` inside parentheses, add no method.
import Varlink

@c(LLVMFuzzerTestOneInput)
public func fuzzInterfaceDescription(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { input in
        let text = String(decoding: input, as: UTF8.self)
        // The bound VarlinkInterfaceDescription states.
        let result = withinHeapBound(32 * text.utf8.count + (64 << 10), "reading \(text.utf8.count) bytes") {
            Result { () throws(VarlinkInterfaceDescriptionError) in try VarlinkInterfaceDescription(text) }
        }
        switch result {
        case .failure(let error):
            require(isOneShortLine(error.description, limit: 256), "the error is not one short line: \(error.description.utf8.count) bytes")
        case .success(let description):
            require(description.text == text, "the text served is not the text given")
            require(VarlinkName.isValidInterfaceName(description.name), "accepted interface name \(description.name)")
            for method in description.methods {
                require(VarlinkName.isValidMemberName(method), "accepted method name \(method)")
            }
            let minimal = "interface \(description.name)\n"
                + description.methods.sorted().map { "method \($0)() -> ()\n" }.joined()
            expectSame(description, minimal, "written again as \(minimal.debugDescription)")
            let decoys = "\n# method FuzzCommented() -> ()\ntype FuzzDecoy (method: string, interface: string)\n"
            expectSame(description, text + decoys, "comments and fields named method added a method")
        }
    }
    return 0
}

private func expectSame(_ description: VarlinkInterfaceDescription, _ text: String, _ what: @autoclosure () -> String) {
    let again = Result { () throws(VarlinkInterfaceDescriptionError) in try VarlinkInterfaceDescription(text) }
    guard case .success(let read) = again else { return require(false, "\(what()): \(again)") }
    require(read.name == description.name && read.methods == description.methods,
            "\(what()): \(read.name) \(read.methods.sorted()) instead of \(description.name) \(description.methods.sorted())")
}
