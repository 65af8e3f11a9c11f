import SystemKit
import Varlink

/// The Guard's Varlink interface (`org.familycontrols.guard`) as Swift types,
/// generated at build time from `Config/org.familycontrols.guard.varlink` by
/// the EmbedInterface plugin: its enums, its record types, a `Parameters`
/// and a `Reply` per method, and ``GuardError`` for its errors. Every field
/// name of the interface is spelled only in the generated code, so renaming
/// one in the file breaks the build, not the wire.
package enum Guard {}

/// A parameters, reply or record type of the interface: a JSON object.
package protocol GuardMessage: Sendable {
    /// The object as it travels.
    var object: JSONObject { get }
    /// The object with every float (a time, in Unix seconds) written by `floats`.
    func object(floats: (Double) -> JSONValue) -> JSONObject
    /// Decodes `object`, naming fields from `prefix`; with `strict`, a field
    /// the interface does not name is refused.
    init(_ object: JSONObject, at prefix: String, strict: Bool) throws(ProtocolDecodingError)
}

extension GuardMessage {
    /// The JSON text, every float written by `floats` (familyctl --json
    /// writes times as ISO 8601 dates).
    package func json(floats: (Double) -> String) -> String {
        JSONValue.object(object(floats: { .string(floats($0)) })).description
    }
}

/// A reply that may carry a prompt for the person at the caller: a method
/// that converses (RequestAuthorization, DecideRequest, ...). The generator
/// gives every reply of a `prompt: ?Prompt` and optional fields alone this
/// conformance.
package protocol GuardPromptingReply: GuardMessage {
    var prompt: Guard.Prompt? { get }
    /// The reply that carries `prompt` and nothing else.
    static func prompting(_ prompt: Guard.Prompt) -> Self
}


/// One method of the interface: its name and what it carries.
package protocol GuardMethod {
    associatedtype Parameters: GuardMessage
    associatedtype Reply: GuardMessage
    /// The method's name within the interface, such as `GetStatus`.
    static var name: String { get }
    /// The qualified name, `org.familycontrols.guard.GetStatus`.
    static var method: String { get }
    /// Whether a call must set `more`.
    static var requiresMore: Bool { get }
}

/// Why a JSON value is not what the interface says: the field (a path such
/// as `authorization.status`) and what was wrong with it.
package struct ProtocolDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Problem: Sendable, Equatable {
        case missing
        case wrongType(expected: String)
        case notOneOf([String])
        case unknownField
    }

    /// The field, dotted from the top (`authorizations[2].status`).
    package var path: String
    package var problem: Problem

    package init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// The top-level field: what sd-varlink names in `InvalidParameter`.
    package var field: String {
        var name = ""
        for character in path {
            if character == "." || character == "[" { break }
            name.append(character)
        }
        return name
    }

    package var description: String {
        switch problem {
        case .missing: "field \(path) is missing"
        case .wrongType(let expected): "field \(path) must be \(expected)"
        case .notOneOf(let names): "field \(path) must be one of \(names.joined(separator: ", "))"
        case .unknownField: "field \(path) is not in the interface"
        }
    }
}

/// The decoding steps the generated code is made of.
package enum ProtocolValue {
    package static func string(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> String {
        switch value {
        case .string(let text)?: return text
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "a string"))
        }
    }

    /// A secret string: the parser hands it over as bytes; a plain string is taken as one too.
    package static func secret(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> SecretBytes {
        switch value {
        case .secret(let secret)?: return secret
        case .string(let text)?: return SecretBytes(text)
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "a string"))
        }
    }

    package static func int(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> Int64 {
        switch value {
        case .int(let number)?: return number
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "a whole number"))
        }
    }

    /// A float: any finite JSON number, written with a fraction or not.
    package static func float(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> Double {
        switch value {
        case .int(let number)?: return Double(number)
        case .double(let number)? where number.isFinite: return number
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "a number"))
        }
    }

    package static func bool(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> Bool {
        switch value {
        case .bool(let flag)?: return flag
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "true or false"))
        }
    }

    package static func object(_ value: JSONValue?, at path: String) throws(ProtocolDecodingError) -> JSONObject {
        switch value {
        case .object(let object)?: return object
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "an object"))
        }
    }

    /// Absent and null are both nil.
    package static func optional<T>(_ value: JSONValue?,
                                    _ decode: (JSONValue) throws(ProtocolDecodingError) -> T) throws(ProtocolDecodingError) -> T? {
        switch value {
        case nil, .null?: return nil
        case let value?: return try decode(value)
        }
    }

    package static func array<T>(_ value: JSONValue?, at path: String,
                                 _ decode: (JSONValue, String) throws(ProtocolDecodingError) -> T) throws(ProtocolDecodingError) -> [T] {
        switch value {
        case .array(let elements)?:
            var decoded: [T] = []
            decoded.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() { decoded.append(try decode(element, "\(path)[\(index)]")) }
            return decoded
        case nil: throw ProtocolDecodingError(path: path, problem: .missing)
        case _?: throw ProtocolDecodingError(path: path, problem: .wrongType(expected: "an array"))
        }
    }

    package static func refuseUnknown(_ object: JSONObject, known: [String], at path: String) throws(ProtocolDecodingError) {
        for member in object where !known.contains(member.key) {
            throw ProtocolDecodingError(path: path + member.key, problem: .unknownField)
        }
    }
}

/// The inspector's Varlink interface (`org.familycontrols.inspect`) as Swift
/// types, generated from `Config/org.familycontrols.inspect.varlink` as
/// ``Guard`` is: what the unprivileged `familycontrols-inspect` read in
/// bytes a child or a remote wrote, typed, so the Guard never parses them.
package enum Inspect {}

/// The Flatpak move service's Varlink interface (`org.familycontrols.mover`)
/// as Swift types, generated from `Config/org.familycontrols.mover.varlink`:
/// the one call the Guard makes of `familycontrols-flatpak@.service` (or of
/// its own move helper), and the approval it answers.
package enum Mover {}

/// The PAM helper's conversation (`org.familycontrols.conversation`) as Swift
/// types, generated from `Config/org.familycontrols.conversation.varlink`:
/// one PAM transaction the Guard runs in a helper process, its messages
/// relayed, the answers carried as secrets.
package enum Conversation {}
