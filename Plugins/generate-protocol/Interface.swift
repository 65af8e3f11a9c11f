// The Varlink interface file, read: its name and its declarations, each
// method with the fields its comments mark secret.

indirect enum FieldType {
    case string, int, float, bool, object, named(String), optional(FieldType), array(FieldType)

    var isOptional: Bool { if case .optional = self { return true }; return false }
}

struct Field {
    var name: String
    var type: FieldType
}

struct Method {
    var name: String
    var parameters: [Field]
    var reply: [Field]
    /// The method's comment holds `[Requires 'more' flag]`, as sd-varlink writes it.
    var requiresMore: Bool
    /// Fields its comment marks `[Secret: NAME]` (a parameter) or
    /// `[Secret reply: NAME]` (a reply's): carried as SecretBytes.
    var secretParameters: Set<String>
    var secretReply: Set<String>
}

enum Declaration {
    case record(String, [Field])
    /// An enum; `model` is the Swift type its comment names with `[Model: TYPE]`:
    /// an enum of the very same cases, converted both ways.
    case enumeration(String, [String], model: String?)
    case method(Method)
    case error(String, [Field])
}

/// Why the interface file cannot be read.
struct InterfaceError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct Interface {
    var name: String
    var declarations: [Declaration]

    var enumNames: Set<String> {
        Set(declarations.compactMap { declaration in
            if case .enumeration(let name, _, _) = declaration { return name }
            return nil
        })
    }

    var methods: [Method] {
        declarations.compactMap { declaration in
            if case .method(let method) = declaration { return method }
            return nil
        }
    }

    var errors: [(name: String, fields: [Field])] {
        declarations.compactMap { declaration in
            if case .error(let name, let fields) = declaration { return (name, fields) }
            return nil
        }
    }

    /// Reads `text`, the interface file's.
    init(parsing text: String) throws(InterfaceError) {
        var parser = Parser(tokens: try Tokenizer.tokens(of: text))
        var name = ""
        var declarations: [Declaration] = []
        while let token = parser.next() {
            guard case .word(let keyword) = token else { throw InterfaceError("expected a keyword") }
            switch keyword {
            case "interface":
                name = try parser.word()
            case "type":
                let model = Self.marked("[Model: ", in: parser.comments)
                let typeName = try parser.word()
                let (fields, cases) = try parser.fields()
                guard model.count <= 1, model.isEmpty || !cases.isEmpty else {
                    throw InterfaceError("\(typeName): [Model: …] names one Swift enum, for an enum type only")
                }
                declarations.append(cases.isEmpty ? .record(typeName, fields) : .enumeration(typeName, cases, model: model.first))
            case "method":
                let comments = parser.comments
                let methodName = try parser.word()
                let parameters = try parser.fields().fields
                try parser.expect("->")
                let reply = try parser.fields().fields
                let method = Method(name: methodName, parameters: parameters, reply: reply,
                                    requiresMore: comments.contains { $0.contains("[Requires 'more' flag]") },
                                    secretParameters: Self.marked("[Secret: ", in: comments),
                                    secretReply: Self.marked("[Secret reply: ", in: comments))
                for secret in method.secretParameters where !parameters.contains(where: { $0.name == secret }) {
                    throw InterfaceError("\(methodName) marks \(secret) secret, but has no such parameter")
                }
                for secret in method.secretReply where !reply.contains(where: { $0.name == secret }) {
                    throw InterfaceError("\(methodName) marks \(secret) of its reply secret, but its reply has no such field")
                }
                declarations.append(.method(method))
            case "error":
                let errorName = try parser.word()
                declarations.append(.error(errorName, try parser.fields().fields))
            default:
                throw InterfaceError("unknown keyword \(keyword)")
            }
            parser.comments = []
        }
        guard !name.isEmpty else { throw InterfaceError("no interface name") }
        self.name = name
        self.declarations = declarations
    }

    /// The names after `marker` up to `]` in `comments`: `[Secret: a, b]`.
    private static func marked(_ marker: String, in comments: [String]) -> Set<String> {
        var names: Set<String> = []
        for comment in comments {
            var rest = Substring(comment)
            while let start = rest.range(of: marker) {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "]") else { break }
                for name in rest[..<end].split(separator: ",") {
                    names.insert(name.trimmingCharacters(in: .whitespaces))
                }
                rest = rest[end...]
            }
        }
        return names
    }
}

enum Token: Equatable { case word(String), symbol(String), comment(String) }

enum Tokenizer {
    static func tokens(of text: String) throws(InterfaceError) -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func isNameCharacter(_ c: Unicode.Scalar) -> Bool {
            c.properties.isAlphabetic || c == "_" || c == "." || ("0"..."9").contains(c)
        }
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
            } else if isNameCharacter(c) {
                var end = index
                while end < scalars.count, isNameCharacter(scalars[end]) { end += 1 }
                tokens.append(.word(String(String.UnicodeScalarView(scalars[index..<end]))))
                index = end
            } else {
                throw InterfaceError("unexpected character \(c)")
            }
        }
        return tokens
    }
}

/// Walks the tokens; comments are gathered in ``comments`` for the
/// declaration that follows them.
struct Parser {
    let tokens: [Token]
    var position = 0
    var comments: [String] = []

    init(tokens: [Token]) { self.tokens = tokens }

    mutating func next() -> Token? {
        while position < tokens.count {
            let token = tokens[position]
            position += 1
            if case .comment(let text) = token { comments.append(text); continue }
            return token
        }
        return nil
    }

    func peek() -> Token? {
        var probe = position
        while probe < tokens.count {
            if case .comment = tokens[probe] { probe += 1; continue }
            return tokens[probe]
        }
        return nil
    }

    mutating func expect(_ symbol: String) throws(InterfaceError) {
        guard next() == .symbol(symbol) else { throw InterfaceError("expected \(symbol)") }
    }

    mutating func word() throws(InterfaceError) -> String {
        guard case .word(let text)? = next() else { throw InterfaceError("expected a name") }
        return text
    }

    mutating func type() throws(InterfaceError) -> FieldType {
        switch next() {
        case .symbol("?")?: return .optional(try type())
        case .symbol("[]")?: return .array(try type())
        case .word("string")?: return .string
        case .word("int")?: return .int
        case .word("float")?: return .float
        case .word("bool")?: return .bool
        case .word("object")?: return .object
        case .word(let name)?: return .named(name)
        default: throw InterfaceError("expected a type")
        }
    }

    /// `(a: T, b: U)` or `(a, b, c)`: fields, or an enum's cases when no `:` follows a name.
    mutating func fields() throws(InterfaceError) -> (fields: [Field], cases: [String]) {
        try expect("(")
        var fields: [Field] = []
        var cases: [String] = []
        if peek() == .symbol(")") {
            _ = next()
            return ([], [])
        }
        while true {
            let name = try word()
            if peek() == .symbol(":") {
                _ = next()
                fields.append(Field(name: name, type: try type()))
            } else {
                cases.append(name)
            }
            switch next() {
            case .symbol(",")?: continue
            case .symbol(")")?: return (fields, cases)
            default: throw InterfaceError("expected , or ) after \(name)")
            }
        }
    }
}
