import Varlink

/// Sends each call where it belongs: `org.varlink.service` is answered here,
/// calls to methods the service declares go to the service, and everything
/// else gets the standard error.
struct ServiceRouter: Sendable {
    let service: any VarlinkService
    let interfaces: [String: VarlinkInterfaceDescription]
    let info: JSONObject

    init(service: any VarlinkService, configuration: VarlinkServerConfiguration) {
        var interfaces: [String: VarlinkInterfaceDescription] = [:]
        for interface in service.interfaces {
            precondition(
                interface.name != VarlinkServiceInterface.name,
                "VarlinkService must not declare \(VarlinkServiceInterface.name): the server provides it"
            )
            precondition(interfaces[interface.name] == nil, "VarlinkService declares \(interface.name) twice")
            interfaces[interface.name] = interface
        }
        self.service = service
        self.interfaces = interfaces
        let names = [VarlinkServiceInterface.name] + service.interfaces.map(\.name)
        info = [
            "vendor": .string(configuration.vendor),
            "product": .string(configuration.product),
            "version": .string(configuration.version),
            "url": .string(configuration.url),
            "interfaces": .array(names.map { .string($0) }),
        ]
    }

    func route(_ call: VarlinkCall, on connection: VarlinkConnection) {
        // This server cannot hand its socket over to another protocol.
        if call.upgrade { return reject(call, .invalidParameter("upgrade"), on: connection) }
        let interface = call.interface
        if interface == VarlinkServiceInterface.name {
            return serveIntrospection(call, on: connection)
        }
        guard let description = interfaces[String(interface)] else {
            return reject(call, .interfaceNotFound(String(interface)), on: connection)
        }
        guard description.methods.contains(String(call.memberName)) else {
            return reject(call, .methodNotFound(call.method), on: connection)
        }
        service.handle(call, on: connection)
    }

    private func serveIntrospection(_ call: VarlinkCall, on connection: VarlinkConnection) {
        switch call.memberName {
        case "GetInfo":
            if call.expectsReply { connection.reply(info) }
        case "GetInterfaceDescription":
            guard case .string(let name)? = call.parameters["interface"] else {
                return reject(call, .invalidParameter("interface"), on: connection)
            }
            let text: String
            if name == VarlinkServiceInterface.name {
                text = VarlinkServiceInterface.text
            } else if let description = interfaces[name] {
                text = description.text
            } else {
                return reject(call, .interfaceNotFound(name), on: connection)
            }
            if call.expectsReply { connection.reply(["description": .string(text)]) }
        default:
            reject(call, .methodNotFound(call.method), on: connection)
        }
    }

    private func reject(_ call: VarlinkCall, _ error: VarlinkError, on connection: VarlinkConnection) {
        if call.expectsReply { connection.fail(error) }
    }
}
