/// Why a description text cannot be served.
package enum VarlinkInterfaceDescriptionError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingInterfaceKeyword
    case repeatedInterfaceKeyword
    case missingName(after: String)
    case invalidInterfaceName(String)
    case invalidMethodName(String)
    case duplicateMethod(String)

    package var description: String {
        switch self {
        case .missingInterfaceKeyword: "interface description has no \"interface\" line"
        case .repeatedInterfaceKeyword: "interface description has more than one \"interface\" line"
        case .missingName(let keyword): "\"\(keyword)\" is not followed by a name"
        case .invalidInterfaceName(let name): "\"\(name)\" is not a valid interface name"
        case .invalidMethodName(let name): "\"\(name)\" is not a valid method name"
        case .duplicateMethod(let name): "method \(name) is declared twice"
        }
    }
}
