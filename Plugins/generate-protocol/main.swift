// generate-protocol INPUT OUTPUT: reads a Varlink interface file and writes
// Swift types for it: one per `type` (a struct, or an enum for an enum type),
// a Parameters and a Reply struct per method, and one error enum for the
// interface's errors. Each struct encodes to and decodes from the project's
// JSONObject, so no field of the interface is spelled anywhere else.
//
// A method whose comment holds `[Requires 'more' flag]` (as sd-varlink writes
// it) gets `requiresMore = true`. A field listed in SECRET (Method.field) is
// carried as SecretBytes, never as a String; a reply's field is listed as
// Method.reply.field.
import Foundation

// generate-protocol --c-header INPUT OUTPUT Method...: writes a C header of
// the names of those methods and of their parameters instead, for C code
// that speaks the interface (the PAM session module).
let cHeader = CommandLine.arguments.dropFirst().first == "--c-header"
let arguments = cHeader ? [CommandLine.arguments[0]] + CommandLine.arguments.dropFirst(2) : CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: generate-protocol [--c-header] INPUT OUTPUT [Method.field ... | Method ...]\n".utf8))
    exit(2)
}
let (input, output) = (arguments[1], arguments[2])
let secretFields = cHeader ? [] : Set(arguments.dropFirst(3))
let headerMethods = cHeader ? Array(arguments.dropFirst(3)) : []

@MainActor func die(_ message: String) -> Never {
    FileHandle.standardError.write(Data("generate-protocol: \(message)\n".utf8))
    exit(1)
}

guard let text = try? String(contentsOfFile: input, encoding: .utf8) else { die("cannot read \(input)") }

// MARK: Tokens

enum Token: Equatable { case word(String), symbol(String), comment(String) }

var tokens: [Token] = []
do {
    let scalars = Array(text.unicodeScalars)
    var index = 0
    while index < scalars.count {
        let c = scalars[index]
        if c == "#" {
            var end = index
            while end < scalars.count, scalars[end] != "\n" { end += 1 }
            tokens.append(.comment(String(String.UnicodeScalarView(scalars[index + 1..<end]))))
            index = end
        } else if c.properties.isWhitespace {
            index += 1
        } else if c == "-" && index + 1 < scalars.count && scalars[index + 1] == ">" {
            tokens.append(.symbol("->"))
            index += 2
        } else if c == "[" && index + 1 < scalars.count && scalars[index + 1] == "]" {
            tokens.append(.symbol("[]"))
            index += 2
        } else if "(),:?".unicodeScalars.contains(c) {
            tokens.append(.symbol(String(c)))
            index += 1
        } else if c.properties.isAlphabetic || c == "_" || ("0"..."9").contains(c) || c == "." {
            var end = index
            while end < scalars.count,
                  scalars[end].properties.isAlphabetic || scalars[end] == "_" || scalars[end] == "." || ("0"..."9").contains(scalars[end]) {
                end += 1
            }
            tokens.append(.word(String(String.UnicodeScalarView(scalars[index..<end]))))
            index = end
        } else {
            die("unexpected character \(c) in \(input)")
        }
    }
}

// MARK: Syntax

indirect enum FieldType {
    case string, int, float, bool, object, named(String), optional(FieldType), array(FieldType)
}

struct Field { var name: String; var type: FieldType }
enum Declaration {
    case record(String, [Field])
    case enumeration(String, [String])
    case method(String, [Field], [Field], requiresMore: Bool)
    case error(String, [Field])
}

var position = 0
var pendingComments: [String] = []
@MainActor func next() -> Token? {
    while position < tokens.count {
        let token = tokens[position]
        position += 1
        if case .comment(let text) = token { pendingComments.append(text); continue }
        return token
    }
    return nil
}
@MainActor func peek() -> Token? {
    var probe = position
    while probe < tokens.count {
        if case .comment = tokens[probe] { probe += 1; continue }
        return tokens[probe]
    }
    return nil
}
@MainActor func expect(_ symbol: String) {
    guard next() == .symbol(symbol) else { die("expected \(symbol)") }
}
@MainActor func word() -> String {
    guard case .word(let text)? = next() else { die("expected a name") }
    return text
}
@MainActor func parseType() -> FieldType {
    switch next() {
    case .symbol("?")?: return .optional(parseType())
    case .symbol("[]")?: return .array(parseType())
    case .word("string")?: return .string
    case .word("int")?: return .int
    case .word("float")?: return .float
    case .word("bool")?: return .bool
    case .word("object")?: return .object
    case .word(let name)?: return .named(name)
    default: die("expected a type")
    }
}
/// `(a: T, b: U)` or `(a, b, c)`: fields, or an enum's cases when no `:` follows a name.
@MainActor func parseFields() -> (fields: [Field], cases: [String]) {
    expect("(")
    var fields: [Field] = []
    var cases: [String] = []
    if peek() == .symbol(")") { _ = next(); return ([], []) }
    while true {
        let name = word()
        if peek() == .symbol(":") {
            _ = next()
            fields.append(Field(name: name, type: parseType()))
        } else {
            cases.append(name)
        }
        switch next() {
        case .symbol(",")?: continue
        case .symbol(")")?: return (fields, cases)
        default: die("expected , or ) after \(name)")
        }
    }
}

var interfaceName = ""
var declarations: [Declaration] = []
while let token = next() {
    guard case .word(let keyword) = token else { die("expected a keyword") }
    switch keyword {
    case "interface":
        interfaceName = word()
        pendingComments = []
    case "type":
        let name = word()
        let (fields, cases) = parseFields()
        declarations.append(cases.isEmpty ? .record(name, fields) : .enumeration(name, cases))
        pendingComments = []
    case "method":
        let requiresMore = pendingComments.contains { $0.contains("[Requires 'more' flag]") }
        pendingComments = []
        let name = word()
        let parameters = parseFields().fields
        expect("->")
        declarations.append(.method(name, parameters, parseFields().fields, requiresMore: requiresMore))
    case "error":
        let name = word()
        declarations.append(.error(name, parseFields().fields))
        pendingComments = []
    default:
        die("unknown keyword \(keyword)")
    }
}
guard !interfaceName.isEmpty else { die("no interface name in \(input)") }

// MARK: C

/// `runtimeDirectory` → `RUNTIME_DIRECTORY`, `OpenSession` → `OPEN_SESSION`.
func macroName(_ name: String) -> String {
    var result = ""
    var previous: Character?
    for character in name {
        // A new word where a capital follows a small letter or a digit: sessionID → SESSION_ID.
        if character.isUppercase, let previous, previous.isLowercase || previous.isNumber { result += "_" }
        result += character.uppercased()
        previous = character
    }
    return result
}

@MainActor func cTypeName(_ type: FieldType) -> String {
    switch type {
    case .string: return "string"
    case .int: return "int"
    case .float: return "float"
    case .bool: return "bool"
    case .object: return "object"
    case .named(let name): return name
    case .optional(let wrapped): return "?" + cTypeName(wrapped)
    case .array(let element): return "[]" + cTypeName(element)
    }
}

if cHeader {
    let prefix = "FAMILYCONTROLS"
    var out = [
        "/* Generated by `generate-protocol --c-header` from \(URL(fileURLWithPath: input).lastPathComponent): do not edit.",
        " * The names of the interface's methods and parameters that C code calls,",
        " * so no name is spelled by hand. A test generates it again and compares. */",
        "#ifndef \(prefix)_GUARD_INTERFACE_H",
        "#define \(prefix)_GUARD_INTERFACE_H",
        "",
        "#define \(prefix)_INTERFACE \"\(interfaceName)\"",
        "/* A reply's keys (the Varlink protocol's own). */",
        "#define \(prefix)_REPLY_ERROR \"error\"",
        "#define \(prefix)_REPLY_PARAMETERS \"parameters\"",
    ]
    for wanted in headerMethods {
        let found = declarations.compactMap { declaration -> [Field]? in
            if case .method(let name, let parameters, _, _) = declaration, name == wanted { return parameters }
            return nil
        }
        guard let parameters = found.first else { die("no method \(wanted) in \(input)") }
        out.append("")
        out.append("/* \(wanted)(" + parameters.map { "\($0.name): \(cTypeName($0.type))" }.joined(separator: ", ") + ") */")
        out.append("#define \(prefix)_\(macroName(wanted)) \"\(interfaceName).\(wanted)\"")
        for parameter in parameters {
            out.append("#define \(prefix)_\(macroName(wanted))_\(macroName(parameter.name)) \"\(parameter.name)\"")
        }
    }
    out.append("")
    out.append("#endif")
    out.append("")
    do {
        try out.joined(separator: "\n").write(toFile: output, atomically: true, encoding: .utf8)
    } catch {
        die("cannot write \(output): \(error)")
    }
    exit(0)
}

// MARK: Swift

let enumNames = Set(declarations.compactMap { declaration -> String? in
    if case .enumeration(let name, _) = declaration { return name }
    return nil
})

@MainActor func swiftType(_ type: FieldType, secret: Bool, namespace: String = "") -> String {
    switch type {
    case .string: return secret ? "SecretBytes" : "String"
    case .int: return "Int64"
    case .float: return "Double"
    case .bool: return "Bool"
    case .object: return "JSONObject"
    case .named(let name): return namespace + name
    case .optional(let wrapped): return swiftType(wrapped, secret: secret, namespace: namespace) + "?"
    case .array(let element): return "[" + swiftType(element, secret: secret, namespace: namespace) + "]"
    }
}

/// An expression of type JSONValue for `value` of `type`.
@MainActor func encode(_ value: String, _ type: FieldType, secret: Bool) -> String {
    switch type {
    case .string: return secret ? ".secret(\(value))" : ".string(\(value))"
    case .int: return ".int(\(value))"
    case .float: return "floats(\(value))"
    case .bool: return ".bool(\(value))"
    case .object: return ".object(\(value))"
    case .named(let name): return enumNames.contains(name) ? "\(value).json" : ".object(\(value).object(floats: floats))"
    case .optional(let wrapped): return "\(value).map { \(encode("$0", wrapped, secret: secret)) } ?? .null"
    case .array(let element): return ".array(\(value).map { \(encode("$0", element, secret: secret)) })"
    }
}

/// An expression that decodes JSONValue `value` at `path` as `type`, throwing ProtocolDecodingError.
@MainActor func decode(_ value: String, _ type: FieldType, path: String, secret: Bool, namespace: String = "") -> String {
    switch type {
    case .string: return secret ? "try ProtocolValue.secret(\(value), at: \(path))" : "try ProtocolValue.string(\(value), at: \(path))"
    case .int: return "try ProtocolValue.int(\(value), at: \(path))"
    case .float: return "try ProtocolValue.float(\(value), at: \(path))"
    case .bool: return "try ProtocolValue.bool(\(value), at: \(path))"
    case .object: return "try ProtocolValue.object(\(value), at: \(path))"
    case .named(let name): return "try \(namespace)\(name)(json: \(value), at: \(path))"
    case .optional(let wrapped):
        return "try ProtocolValue.optional(\(value)) { value throws(ProtocolDecodingError) in \(decode("value", wrapped, path: path, secret: secret, namespace: namespace)) }"
    case .array(let element):
        return "try ProtocolValue.array(\(value), at: \(path)) { value, path throws(ProtocolDecodingError) in \(decode("value", element, path: "path", secret: secret, namespace: namespace)) }"
    }
}

@MainActor func isOptional(_ type: FieldType) -> Bool { if case .optional = type { return true }; return false }

let keywords: Set<String> = ["default", "case", "repeat", "protocol", "extension", "import", "in", "is", "as", "self", "Type",
                             "continue", "break", "return", "throw", "where", "switch", "if", "else", "for", "while",
                             "struct", "class", "enum", "let", "var", "func", "init", "error", "internal", "private", "public"]
@MainActor func identifier(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }
@MainActor func lowerFirst(_ name: String) -> String { name.prefix(1).lowercased() + name.dropFirst() }

/// A struct for `fields`, with an init, `json`, and a decoding init. `nilAs`
/// says whether nil optionals travel as null (records) or are left out.
@MainActor func structure(_ name: String, _ fields: [Field], indent: String, nullForNil: Bool, secretPrefix: String?,
               doc: String) -> String {
    var lines: [String] = []
    lines.append("\(indent)/// \(doc)")
    let secret: (Field) -> Bool = { field in secretPrefix.map { secretFields.contains("\($0).\(field.name)") } ?? false }
    let equatable = fields.contains(where: secret) ? "" : ", Equatable"
    lines.append("\(indent)package struct \(name): GuardMessage\(equatable) {")
    for field in fields {
        lines.append("\(indent)    package var \(identifier(field.name)): \(swiftType(field.type, secret: secret(field)))")
    }
    if !fields.isEmpty { lines.append("") }
    let initArguments = fields.map { field in
        "\(identifier(field.name)): \(swiftType(field.type, secret: secret(field)))\(isOptional(field.type) ? " = nil" : "")"
    }
    lines.append("\(indent)    package init(\(initArguments.joined(separator: ", "))) {")
    for field in fields { lines.append("\(indent)        self.\(identifier(field.name)) = \(identifier(field.name))") }
    lines.append("\(indent)    }")
    lines.append("")
    lines.append("\(indent)    /// The fields as the interface names them.")
    lines.append("\(indent)    package static let fieldNames: [String] = [\(fields.map { "\"\($0.name)\"" }.joined(separator: ", "))]")
    lines.append("")
    lines.append("\(indent)    /// The JSON object the interface sends.")
    lines.append("\(indent)    package var object: JSONObject { object(floats: { .double($0) }) }")
    lines.append("")
    lines.append("\(indent)    /// The object with every float (a time, in Unix seconds) written by")
    lines.append("\(indent)    /// `floats`: familyctl --json shows times as dates this way.")
    lines.append("\(indent)    package func object(floats: (Double) -> JSONValue) -> JSONObject {")
    lines.append("\(indent)        \(fields.isEmpty ? "let" : "var") object = JSONObject()")
    for field in fields {
        let value = "self.\(identifier(field.name))"
        if case .optional(let wrapped) = field.type, !nullForNil {
            lines.append("\(indent)        if let value = \(value) { object[\"\(field.name)\"] = \(encode("value", wrapped, secret: secret(field))) }")
        } else {
            lines.append("\(indent)        object[\"\(field.name)\"] = \(encode(value, field.type, secret: secret(field)))")
        }
    }
    lines.append("\(indent)        return object")
    lines.append("\(indent)    }")
    lines.append("")
    lines.append("\(indent)    package var json: JSONValue { .object(object) }")
    lines.append("")
    lines.append("\(indent)    /// Decodes `object`; with `strict`, a field the interface does not name is refused.")
    lines.append("\(indent)    package init(_ object: JSONObject, at prefix: String = \"\", strict: Bool = false) throws(ProtocolDecodingError) {")
    lines.append("\(indent)        if strict { try ProtocolValue.refuseUnknown(object, known: Self.fieldNames, at: prefix) }")
    for field in fields {
        lines.append("\(indent)        \(identifier(field.name)) = \(decode("object[\"\(field.name)\"]", field.type, path: "prefix + \"\(field.name)\"", secret: secret(field)))")
    }
    lines.append("\(indent)    }")
    lines.append("")
    lines.append("\(indent)    package init(json value: JSONValue?, at path: String) throws(ProtocolDecodingError) {")
    lines.append("\(indent)        try self.init(try ProtocolValue.object(value, at: path), at: path + \".\")")
    lines.append("\(indent)    }")
    lines.append("\(indent)}")
    return lines.joined(separator: "\n")
}
@MainActor func path(_ name: String) -> String { name }

var out: [String] = []
out.append("// Generated by generate-protocol from \((input as NSString).lastPathComponent); edit that file instead.")
out.append("import SystemKit")
out.append("import Varlink")
out.append("")
out.append("/// The interface's name.")
out.append("package let guardInterfaceName = \"\(interfaceName)\"")
out.append("")
out.append("extension Guard {")
out.append("    /// The fields whose values are secrets (a password), carried as SecretBytes.")
out.append("    package static let secretFields: Set<String> = [\(Set(secretFields.map { String($0.split(separator: ".").last ?? "") }).sorted().map { "\"\($0)\"" }.joined(separator: ", "))]")

for declaration in declarations {
    switch declaration {
    case .record(let name, let fields):
        out.append(structure(name, fields, indent: "", nullForNil: true, secretPrefix: nil, doc: "The interface's type `\(name)`."))
        out.append("")
    case .enumeration(let name, let cases):
        out.append("/// The interface's enum `\(name)`: a JSON string, one of \(cases.joined(separator: ", ")).")
        out.append("package enum \(name): String, Sendable, Equatable, CaseIterable, CustomStringConvertible {")
        for item in cases { out.append("    case \(identifier(item))") }
        out.append("")
        out.append("    package var description: String { rawValue }")
        out.append("    package var json: JSONValue { .string(rawValue) }")
        out.append("")
        out.append("    package init(json value: JSONValue?, at path: String) throws(ProtocolDecodingError) {")
        out.append("        let name = try ProtocolValue.string(value, at: path)")
        out.append("        guard let known = Self(rawValue: name) else {")
        out.append("            throw ProtocolDecodingError(path: path, problem: .notOneOf(Self.allCases.map(\\.rawValue)))")
        out.append("        }")
        out.append("        self = known")
        out.append("    }")
        out.append("}")
        out.append("")
    case .method(let name, let parameters, let reply, let requiresMore):
        out.append("/// The interface's method `\(name)`.")
        out.append("package enum \(name): GuardMethod {")
        out.append("    package static let name = \"\(name)\"")
        out.append("    package static let method = \"\(interfaceName).\(name)\"")
        out.append("    /// Whether a call must set `more` (the interface says `[Requires 'more' flag]`).")
        out.append("    package static let requiresMore = \(requiresMore)")
        out.append("")
        out.append(structure("Parameters", parameters, indent: "    ", nullForNil: false, secretPrefix: name,
                             doc: "What `\(name)` is called with."))
        out.append("")
        out.append(structure("Reply", reply, indent: "    ", nullForNil: false, secretPrefix: name + ".reply",
                             doc: "What `\(name)` replies."))
        out.append("}")
        out.append("")
    case .error:
        break
    }
}

out.append("}")
out.append("")

// The errors: one enum.
let errors = declarations.compactMap { declaration -> (String, [Field])? in
    if case .error(let name, let fields) = declaration { return (name, fields) }
    return nil
}
out.append("/// The interface's errors, each with its fields.")
out.append("package enum GuardError: Error, Sendable, Equatable {")
for (name, fields) in errors {
    let associated = fields.map { "\(identifier($0.name)): \(swiftType($0.type, secret: false, namespace: "Guard."))" }
    out.append("    case \(identifier(lowerFirst(name)))\(associated.isEmpty ? "" : "(" + associated.joined(separator: ", ") + ")")")
}
out.append("")
out.append("    /// The error's qualified name, as it travels.")
out.append("    package var name: String {")
out.append("        switch self {")
for (name, _) in errors { out.append("        case .\(lowerFirst(name)): \"\(interfaceName).\(name)\"") }
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
    out.append("        case \"\(interfaceName).\(name)\":")
    let values = fields.map { "\(identifier($0.name)): \(decode("parameters[\"\($0.name)\"]", $0.type, path: "\"\($0.name)\"", secret: false, namespace: "Guard."))" }
    out.append("            self = .\(lowerFirst(name))\(values.isEmpty ? "" : "(" + values.joined(separator: ", ") + ")")")
}
out.append("        default:")
out.append("            return nil")
out.append("        }")
out.append("    }")
out.append("}")
out.append("")

do {
    try out.joined(separator: "\n").write(toFile: output, atomically: true, encoding: .utf8)
} catch {
    die("cannot write \(output): \(error)")
}
