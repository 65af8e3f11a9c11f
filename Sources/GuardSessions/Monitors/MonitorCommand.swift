import SystemKit

/// An app's monitor, as its desktop entry declares it
/// (`X-FamilyControls-Monitor=bin/monitor --flag`): a program inside the
/// app's own folder, so it is locked with the app, and its arguments.
///
/// The value is split as the Desktop Entry specification splits `Exec=`:
/// words separated by spaces, a double-quoted word may hold spaces, and
/// inside quotes `\"`, `` \` ``, `\$` and `\\` stand for the character.
/// Field codes (`%f`, `%u`…) have no meaning for a monitor and are refused;
/// `%%` is a percent sign.
package struct MonitorCommand: Hashable, Sendable {
    /// The program's path inside the app's folder (`bin/monitor`).
    package var program: String
    package var arguments: [String]

    /// The most words and bytes a monitor command may have.
    static let maximumWords = 64
    static let maximumBytes = 4096

    package init(program: String, arguments: [String]) {
        self.program = program
        self.arguments = arguments
    }

    /// Reads `value`.
    /// - Throws: ``MonitorCommandError`` naming what is wrong.
    package init(parsing value: String) throws(MonitorCommandError) {
        guard value.utf8.count <= Self.maximumBytes else { throw .tooLong }
        let words = try Self.words(value)
        guard let first = words.first else { throw .empty }
        guard words.count <= Self.maximumWords else { throw .tooLong }
        try Self.check(program: first)
        program = first
        arguments = Array(words.dropFirst())
    }

    /// A relative path with no empty, `.` or `..` part: it cannot leave the
    /// app's folder by its spelling (a link inside is checked where it is run).
    private static func check(program: String) throws(MonitorCommandError) {
        guard !program.hasPrefix("/") else { throw .absoluteProgram(program) }
        let parts = program.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { throw .outsideTheApp(program) }
    }

    private static func words(_ value: String) throws(MonitorCommandError) -> [String] {
        var words: [String] = []
        var word: [UInt8] = []
        var inWord = false, quoted = false
        var bytes = value.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "\""):
                quoted.toggle()
                inWord = true
            case UInt8(ascii: "\\") where quoted:
                guard let next = bytes.next(), [UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "$"),
                                                 UInt8(ascii: "\\")].contains(next) else { throw .badEscape }
                word.append(next)
            case UInt8(ascii: "%"):
                guard bytes.next() == UInt8(ascii: "%") else { throw .fieldCode }
                word.append(byte)
                inWord = true
            case UInt8(ascii: " ") where !quoted, UInt8(ascii: "\t") where !quoted:
                if inWord { words.append(String(decoding: word, as: UTF8.self)) }
                word = []
                inWord = false
            case 0..<0x20, 0x7F:
                throw .controlCharacter
            default:
                word.append(byte)
                inWord = true
            }
        }
        guard !quoted else { throw .unclosedQuote }
        if inWord { words.append(String(decoding: word, as: UTF8.self)) }
        return words
    }
}

/// Why an `X-FamilyControls-Monitor=` value is not a monitor command.
package enum MonitorCommandError: Error, Equatable, CustomStringConvertible {
    case empty
    case tooLong
    case absoluteProgram(String)
    case outsideTheApp(String)
    case badEscape
    case fieldCode
    case controlCharacter
    case unclosedQuote

    package var description: String {
        switch self {
        case .empty: "it names no program"
        case .tooLong: "it is longer than \(MonitorCommand.maximumBytes) bytes or \(MonitorCommand.maximumWords) words"
        case .absoluteProgram(let program):
            "the program \(DisplayText.sanitized(program).clipped) is an absolute path; it must be a path inside the app's folder"
        case .outsideTheApp(let program):
            "the program \(DisplayText.sanitized(program).clipped) has an empty, . or .. part; it must be a path inside the app's folder"
        case .badEscape: "a backslash inside quotes must come before \", `, $ or \\"
        case .fieldCode: "field codes such as %f have no meaning for a monitor (write %% for a percent sign)"
        case .controlCharacter: "it holds a control character"
        case .unclosedQuote: "a double quote is not closed"
        }
    }
}
