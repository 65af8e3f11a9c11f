// The interface's errors as one Swift enum: each with its fields, its
// qualified name, its parameters as they travel, and a decoder by name.

extension SwiftWriter {
    /// Nothing for an interface that declares no error (its failures travel in its replies).
    func errors() -> [String] {
        let errors = interface.errors
        guard !errors.isEmpty else { return [] }
        var out: [String] = []
        out.append("/// The interface's errors, each with its fields.")
        out.append("package enum \(namespace)Error: Error, Sendable, Equatable {")
        for (name, fields) in errors {
            let associated = fields.map { "\(identifier($0.name)): \(swiftType($0.type, secret: false, namespace: namespace + "."))" }
            out.append("    case \(identifier(lowerFirst(name)))\(associated.isEmpty ? "" : "(" + associated.joined(separator: ", ") + ")")")
        }
        out.append("")
        out.append("    /// The error's qualified name, as it travels.")
        out.append("    package var name: String {")
        out.append("        switch self {")
        for (name, _) in errors { out.append("        case .\(lowerFirst(name)): \"\(interface.name).\(name)\"") }
        out.append("        }")
        out.append("    }")
        out.append("")
        out.append("    /// The error's parameters, as they travel (nil optionals left out).")
        out.append("    package var parameters: JSONObject {")
        out.append("        var object = JSONObject()")
        out.append("        switch self {")
        for (name, fields) in errors {
            let bindings = fields.map { "let \(identifier($0.name))" }.joined(separator: ", ")
            out.append("        case .\(lowerFirst(name))\(fields.isEmpty ? "" : "(" + bindings + ")"):")
            if fields.isEmpty { out.append("            break") }
            for field in fields {
                if case .optional(let wrapped) = field.type {
                    out.append("            if let value = \(identifier(field.name)) { object[\"\(field.name)\"] = \(encode("value", wrapped, secret: false)) }")
                } else {
                    out.append("            object[\"\(field.name)\"] = \(encode(identifier(field.name), field.type, secret: false))")
                }
            }
        }
        out.append("        }")
        out.append("        return object")
        out.append("    }")
        out.append("")
        // Every error says what happened: then `message` reads it from any.
        if errors.allSatisfy({ $0.1.contains { $0.name == "message" } }) {
            out.append("    /// What the error says, for a person.")
            out.append("    package var message: String {")
            out.append("        switch self {")
            for (name, fields) in errors {
                let bindings = fields.map { $0.name == "message" ? "let message" : "_" }.joined(separator: ", ")
                out.append("        case .\(lowerFirst(name))(\(bindings)): message")
            }
            out.append("        }")
            out.append("    }")
            out.append("")
        }
        out.append("    /// The error named `name` (qualified), decoded from `parameters`; nil for")
        out.append("    /// a name the interface does not declare.")
        out.append("    package init?(name: String, parameters: JSONObject) throws(ProtocolDecodingError) {")
        out.append("        switch name {")
        for (name, fields) in errors {
            out.append("        case \"\(interface.name).\(name)\":")
            let values = fields.map { "\(identifier($0.name)): \(decode("parameters[\"\($0.name)\"]", $0.type, path: "\"\($0.name)\"", secret: false, namespace: namespace + "."))" }
            out.append("            self = .\(lowerFirst(name))\(values.isEmpty ? "" : "(" + values.joined(separator: ", ") + ")")")
        }
        out.append("        default:")
        out.append("            return nil")
        out.append("        }")
        out.append("    }")
        out.append("}")
        out.append("")
        return out
    }
}
