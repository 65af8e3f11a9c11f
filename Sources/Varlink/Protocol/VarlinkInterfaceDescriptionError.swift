/// Why a description text cannot be served.
package enum VarlinkInterfaceDescriptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text has no `interface` line.
    case missingInterfaceKeyword
    /// The text declares more than one interface.
    case repeatedInterfaceKeyword
    /// A keyword ends the text without its name.
    case missingName(after: String)
    /// The interface name breaks the naming rules (``VarlinkName``).
    case invalidInterfaceName(String)
    /// A method name does not start with an uppercase letter, or has other characters.
    case invalidMethodName(String)
    /// A method is declared twice.
    case duplicateMethod(String)

    package var description: String {
        switch self {
        case .missingInterfaceKeyword: "interface description has no \"interface\" line"
        case .repeatedInterfaceKeyword: "interface description has more than one \"interface\" line"
        case .missingName(let keyword): "\"\(keyword)\" is not followed by a name"
        // A word of the text can be as long as the text: keep the message one short line.
        case .invalidInterfaceName(let name): "\"\(name.prefix(80))\" is not a valid interface name"
        case .invalidMethodName(let name): "\"\(name.prefix(80))\" is not a valid method name"
        case .duplicateMethod(let name): "method \(name.prefix(80)) is declared twice"
        }
    }
}
