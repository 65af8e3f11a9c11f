/// An interface a service provides: its name, its full description text (the
/// Varlink IDL, returned by `GetInterfaceDescription`) and the methods the
/// text declares.
///
/// This is not an IDL parser: it reads the `interface` line and the names
/// after each top-level `method` keyword, which is all routing needs.
///
/// Reading takes at most 32 bytes of heap per byte of text, plus 64 KiB
/// (a text of one-letter words, the worst, takes about 24).
package struct VarlinkInterfaceDescription: Sendable, Equatable {
    /// The interface name from the `interface` line.
    package let name: String
    /// The description text as given.
    package let text: String
    /// The method names the text declares.
    package let methods: Set<String>

    /// Reads the interface name and method names from `text`.
    /// - Throws: ``VarlinkInterfaceDescriptionError``.
    package init(_ text: String) throws(VarlinkInterfaceDescriptionError) {
        let words = Self.topLevelWords(of: text)
        var name: String?
        var methods = Set<String>()
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "interface" || word == "method" {
                guard index + 1 < words.count else { throw .missingName(after: word) }
                let value = words[index + 1]
                if word == "interface" {
                    guard name == nil else { throw .repeatedInterfaceKeyword }
                    guard VarlinkName.isValidInterfaceName(value) else { throw .invalidInterfaceName(value) }
                    name = value
                } else {
                    guard VarlinkName.isValidMemberName(value) else { throw .invalidMethodName(value) }
                    guard methods.insert(value).inserted else { throw .duplicateMethod(value) }
                }
                index += 1
            }
            index += 1
        }
        guard let name else { throw .missingInterfaceKeyword }
        self.name = name
        self.text = text
        self.methods = methods
    }

    /// The words outside parentheses and comments: keywords and the names
    /// after them. A field called `method` inside `( … )` is skipped this way.
    private static func topLevelWords(of text: String) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        var depth = 0
        var inComment = false
        func flush() {
            if !current.isEmpty, depth == 0 { words.append(String(decoding: current, as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in text.utf8 {
            if inComment {
                if byte == UInt8(ascii: "\n") { inComment = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "#"): flush(); inComment = true
            case UInt8(ascii: "("): flush(); depth += 1
            case UInt8(ascii: ")"): flush(); depth = max(0, depth - 1)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                current.append(byte)
            default: flush()
            }
        }
        flush()
        return words
    }
}
