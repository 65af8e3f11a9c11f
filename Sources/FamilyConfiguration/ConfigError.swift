/// A problem in the configuration file, naming the file, the line, and what
/// was expected.
package struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    package var file: String
    /// 1-based; 0 when the problem is the file as a whole.
    package var line: Int
    package var message: String

    package init(file: String, line: Int, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String {
        line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)"
    }
}
