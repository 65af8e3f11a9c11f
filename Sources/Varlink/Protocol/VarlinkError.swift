/// A Varlink error reply: a qualified error name and its parameters.
///
/// A service fails a call with one (``VarlinkConnection/fail(_:)``); a client
/// receives one as ``VarlinkClientError/remote(_:)``.
package struct VarlinkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The qualified error name, such as `org.varlink.service.MethodNotFound`.
    package var name: String
    /// The error's parameters.
    package var parameters: JSONObject

    /// An error named `name` (qualified: `interface.ErrorName`).
    package init(name: String, parameters: JSONObject = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// The errors of the `org.varlink.service` interface.
    package enum Name {
        /// `InterfaceNotFound(interface)`.
        package static let interfaceNotFound = "org.varlink.service.InterfaceNotFound"
        /// `MethodNotFound(method)`.
        package static let methodNotFound = "org.varlink.service.MethodNotFound"
        /// `MethodNotImplemented(method)`.
        package static let methodNotImplemented = "org.varlink.service.MethodNotImplemented"
        /// `InvalidParameter(parameter)`.
        package static let invalidParameter = "org.varlink.service.InvalidParameter"
        /// `PermissionDenied()`.
        package static let permissionDenied = "org.varlink.service.PermissionDenied"
        /// `ExpectedMore()`.
        package static let expectedMore = "org.varlink.service.ExpectedMore"
    }

    /// The service does not provide interface `interface`.
    package static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: Name.interfaceNotFound, parameters: ["interface": .string(interface)])
    }

    /// The interface has no method `method` (qualified name).
    package static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: Name.methodNotFound, parameters: ["method": .string(method)])
    }

    /// The interface declares `method` but the service does not implement it.
    package static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: Name.methodNotImplemented, parameters: ["method": .string(method)])
    }

    /// Parameter `parameter` is missing, of the wrong type, or out of range.
    package static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: Name.invalidParameter, parameters: ["parameter": .string(parameter)])
    }

    /// The caller may not make this call.
    package static let permissionDenied = VarlinkError(name: Name.permissionDenied)

    /// The method streams its replies and must be called with `more`.
    package static let expectedMore = VarlinkError(name: Name.expectedMore)

    package var description: String {
        parameters.isEmpty ? name : "\(name) \(parameters)"
    }
}
