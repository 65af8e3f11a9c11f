/// A reply: `{"parameters": {…}, "continues": …, "error": "iface.Error"}`.
package struct VarlinkReply: Sendable, Equatable {
    /// The output parameters, or an error's parameters.
    package var parameters: JSONObject
    /// More replies to the same call follow.
    package var continues: Bool
    /// The qualified error name when the call failed.
    package var error: String?

    /// A reply; by default a final, successful one.
    package init(parameters: JSONObject = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// An error reply for `error`.
    package init(failure error: VarlinkError) {
        self.init(parameters: error.parameters, continues: false, error: error.name)
    }

    /// The error this reply carries, if it is an error reply.
    package var failure: VarlinkError? {
        error.map { VarlinkError(name: $0, parameters: parameters) }
    }
}

extension VarlinkReply {
    /// Validates a decoded message; unknown fields are ignored.
    /// - Throws: ``VarlinkMessageError``.
    package init(decoding value: JSONValue) throws(VarlinkMessageError) {
        guard case .object(let object) = value else { throw .notAnObject }
        var parameters = JSONObject()
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        case _?: throw .wrongFieldType("parameters", expected: "an object")
        }
        var error: String?
        switch object["error"] {
        case nil, .null?: break
        case .string(let name)?:
            guard VarlinkName.split(qualified: name) != nil else { throw .invalidErrorName(name) }
            error = name
        case _?: throw .wrongFieldType("error", expected: "a string")
        }
        let continues = try VarlinkCall.flag("continues", in: object)
        self.init(parameters: parameters, continues: continues, error: error)
    }

    /// Parses and validates one frame (without its NUL).
    /// - Throws: ``VarlinkMessageError``.
    package init(parsing frame: UnsafeRawBufferPointer) throws(VarlinkMessageError) {
        let value: JSONValue
        do { value = try JSONParser.parse(frame) } catch { throw .invalidJSON(error) }
        try self.init(decoding: value)
    }

    /// The frame to send: compact JSON and the terminating NUL.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        encode(into: &bytes)
        return bytes
    }

    /// Appends the frame (JSON and NUL) to `bytes`, written directly rather than
    /// through a `JSONValue`: this is the server's hot path.
    package func encode(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"parameters":"#.utf8)
        JSONSerializer.writeObject(parameters, into: &bytes)
        if continues { bytes.append(contentsOf: #","continues":true"#.utf8) }
        if let error {
            bytes.append(contentsOf: #","error":"#.utf8)
            JSONSerializer.writeString(error, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0)
    }
}
