import SystemKit

/// Why a frame is not a valid Varlink call or reply.
package enum VarlinkMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The frame is not JSON.
    case invalidJSON(JSONParseError)
    /// The frame is JSON but not an object.
    case notAnObject
    /// A required field is absent (`method` in a call).
    case missingField(String)
    /// A field has the wrong JSON type, such as `"parameters": []` or `"more": 1`.
    case wrongFieldType(String, expected: String)
    /// `method` is not `interface.Method` under the naming rules.
    case invalidMethodName(String)
    /// `error` is not `interface.Error` under the naming rules.
    case invalidErrorName(String)
    /// A call asked for both `oneway` (no reply) and `more` (many replies).
    case onewayWithMore

    /// The call field to name in an `org.varlink.service.InvalidParameter` reply.
    package var fieldName: String? {
        switch self {
        case .missingField(let field), .wrongFieldType(let field, _): field
        case .invalidMethodName: "method"
        case .invalidErrorName: "error"
        case .onewayWithMore: "oneway"
        case .invalidJSON, .notAnObject: nil
        }
    }

    package var description: String {
        switch self {
        case .invalidJSON(let error): "\(error)"
        case .notAnObject: "message is not a JSON object"
        case .missingField(let field): "message lacks \"\(field)\""
        case .wrongFieldType(let field, let expected): "\"\(field)\" must be \(expected)"
        // Names are the peer's text: shown escaped and cut, one safe line.
        case .invalidMethodName(let name): "\"\(DisplayText.sanitized(name, limit: 80))\" is not a qualified method name"
        case .invalidErrorName(let name): "\"\(DisplayText.sanitized(name, limit: 80))\" is not a qualified error name"
        case .onewayWithMore: "a call cannot be both oneway and more"
        }
    }
}
