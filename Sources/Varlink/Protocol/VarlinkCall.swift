/// A method call: `{"method": "iface.Method", "parameters": {…}, "oneway": …, "more": …, "upgrade": …}`.
package struct VarlinkCall: Sendable, Equatable {
    /// The qualified method name, `interface.Method`.
    package var method: String
    /// The call's input parameters.
    package var parameters: JSONObject
    /// The caller wants no reply.
    package var oneway: Bool
    /// The caller accepts several replies, all but the last with `continues`.
    package var more: Bool
    /// The caller wants the connection to leave Varlink after the reply.
    package var upgrade: Bool

    /// A call; the flags default to an ordinary call expecting one reply.
    package init(
        method: String, parameters: JSONObject = [:],
        oneway: Bool = false, more: Bool = false, upgrade: Bool = false
    ) {
        self.method = method
        self.parameters = parameters
        self.oneway = oneway
        self.more = more
        self.upgrade = upgrade
    }

    /// The interface part of ``method`` (before the last dot).
    package var interface: Substring {
        guard let dot = method.utf8.lastIndex(of: UInt8(ascii: ".")) else { return method[...] }
        return method[..<dot]
    }

    /// The method's own name (after the last dot).
    package var memberName: Substring {
        guard let dot = method.utf8.lastIndex(of: UInt8(ascii: ".")) else { return method[...] }
        return method[method.index(after: dot)...]
    }

    /// Whether a reply must be sent at all.
    package var expectsReply: Bool { !oneway }
}

extension VarlinkCall {
    /// Validates a decoded message. Unknown fields are ignored, as the
    /// specification asks, so newer clients keep working.
    /// - Throws: ``VarlinkMessageError``.
    package init(decoding value: JSONValue) throws(VarlinkMessageError) {
        guard case .object(let object) = value else { throw .notAnObject }
        guard let methodValue = object["method"] else { throw .missingField("method") }
        guard case .string(let method) = methodValue else { throw .wrongFieldType("method", expected: "a string") }
        guard VarlinkName.split(qualified: method) != nil else { throw .invalidMethodName(method) }
        var parameters = JSONObject()
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        case _?: throw .wrongFieldType("parameters", expected: "an object")
        }
        let oneway = try Self.flag("oneway", in: object)
        let more = try Self.flag("more", in: object)
        if oneway && more { throw .onewayWithMore }
        self.init(
            method: method, parameters: parameters,
            oneway: oneway, more: more, upgrade: try Self.flag("upgrade", in: object)
        )
    }

    /// Parses and validates one frame (without its NUL). String values of
    /// members named in `secretParameters` become ``JSONValue/secret(_:)``.
    /// - Throws: ``VarlinkMessageError``.
    package init(parsing frame: UnsafeRawBufferPointer, secretParameters: Set<String> = []) throws(VarlinkMessageError) {
        let value: JSONValue
        do { value = try JSONParser.parse(frame, secretKeys: secretParameters) } catch { throw .invalidJSON(error) }
        try self.init(decoding: value)
    }

    /// The message as JSON.
    package var jsonValue: JSONValue {
        var object: JSONObject = ["method": .string(method), "parameters": .object(parameters)]
        if oneway { object["oneway"] = true }
        if more { object["more"] = true }
        if upgrade { object["upgrade"] = true }
        return .object(object)
    }

    /// The frame to send: compact JSON and the terminating NUL.
    package func encoded() -> [UInt8] {
        let value = jsonValue
        var bytes: [UInt8] = []
        // A frame holding a secret is sized before it is written, so it never
        // grows and leaves a copy of the secret in the storage it outgrew.
        // Escaping at most sextuples a byte; the redacted text bounds the rest.
        let secrets = value.secretByteCount
        bytes.reserveCapacity(secrets == 0 ? 64 : value.description.utf8.count + secrets * 6 + 1)
        value.serialize(into: &bytes)
        bytes.append(0)
        return bytes
    }

    /// Whether the call carries a secret, so its frame must be zeroed once sent.
    package var carriesSecret: Bool { JSONValue.object(parameters).secretByteCount > 0 }

    /// Reads an optional boolean flag; absent and `null` mean false.
    static func flag(_ name: String, in object: JSONObject) throws(VarlinkMessageError) -> Bool {
        switch object[name] {
        case nil, .null?: false
        case .bool(let value)?: value
        case _?: throw .wrongFieldType(name, expected: "a boolean")
        }
    }
}
