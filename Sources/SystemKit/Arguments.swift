/// A command line split into options and operands, in the manner of
/// swift-argument-parser but small: `--name value`, `--name=value`, flags,
/// `--` to end options. Unknown options are errors, never ignored.
package struct Arguments: Sendable {
    /// Options that take a value, and flags that don't, both spelled with dashes (`--pam-dir`).
    package struct Specification: Sendable {
        package var valued: Set<String>
        package var flags: Set<String>
        package init(valued: Set<String> = [], flags: Set<String> = []) {
            self.valued = valued
            self.flags = flags
        }
    }

    package private(set) var operands: [String] = []
    package private(set) var values: [String: String] = [:]
    package private(set) var flags: Set<String> = []

    /// Parses `tokens` against `specification`.
    /// - Throws: ``UsageError`` naming the offending token.
    package init(_ tokens: [String], _ specification: Specification) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if optionsEnded || !token.hasPrefix("-") || token == "-" {
                operands.append(token)
                continue
            }
            if token == "--" { optionsEnded = true; continue }
            var name = token
            var inline: String?
            if let equals = token.firstIndex(of: "=") {
                name = String(token[..<equals])
                inline = String(token[token.index(after: equals)...])
            }
            if specification.flags.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else if specification.valued.contains(name) {
                if let inline {
                    values[name] = inline
                } else {
                    guard index < tokens.count else { throw UsageError("\(name) needs a value") }
                    values[name] = tokens[index]
                    index += 1
                }
            } else {
                throw UsageError("unknown option \(name.clipped)")
            }
        }
    }

    package func has(_ flag: String) -> Bool { flags.contains(flag) }
    package subscript(_ option: String) -> String? { values[option] }
}

/// A mistake on the command line; the message says what was expected.
package struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
