#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The main file and its drop-ins: `familycontrols.conf`, then
/// `familycontrols.conf.d/*.conf` in lexical order (systemd's and sudo's
/// convention), so a configuration management tool can push one file per
/// concern without editing the main one.
extension GuardConfiguration {
    /// The most drop-ins read; a folder with more is an error.
    package static let dropInLimit = 256

    /// The drop-in folder of the main file at `path`: its name plus `.d`, beside it.
    package static func dropInFolder(of path: String) -> String { path + ".d" }

    /// Reads `path` and its drop-ins and parses them as one.
    ///
    /// A missing main file at the default path means the embedded defaults
    /// (drop-ins still apply); anywhere else it is an error. A missing
    /// drop-in folder is none.
    /// - Throws: ``ConfigError`` naming the file and line.
    package static func load(path: String = defaultPath) throws(ConfigError) -> GuardConfiguration {
        try GuardConfiguration(parsing: readFiles(path: path))
    }

    /// The texts of the main file (when it exists) and of its drop-ins, in the
    /// order they apply.
    /// - Throws: ``ConfigError`` for a file that cannot be read, is larger
    ///   than 1 MiB or is not UTF-8 text, and for a drop-in folder that cannot be listed.
    package static func readFiles(path: String) throws(ConfigError) -> [(path: String, text: String)] {
        var files: [(path: String, text: String)] = []
        if let main = try readText(path, missingIsNone: path == defaultPath) { files.append((path, main)) }
        for dropIn in try dropIns(of: path) {
            guard let text = try readText(dropIn, missingIsNone: true) else { continue }
            files.append((dropIn, text))
        }
        return files
    }

    /// The paths of the `*.conf` files in `path`'s drop-in folder, sorted by
    /// their bytes (as `LC_ALL=C ls` lists them); hidden files are skipped.
    package static func dropIns(of path: String) throws(ConfigError) -> [String] {
        let folder = dropInFolder(of: path)
        let entries: [DirectoryEntry]
        do throws(Errno) {
            let descriptor = try FileDescriptor.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { descriptor.close() }
            entries = try descriptor.readDirectory()
        } catch where error.rawValue == ENOENT {
            return []
        } catch {
            throw ConfigError(file: folder, line: 0, "cannot be listed: \(Errno(error.rawValue))")
        }
        let names = entries.map(\.name.bytes)
            .filter { name in name.first != UInt8(ascii: ".") && name.count > 5 && name.suffix(5).elementsEqual(".conf".utf8) }
            .sorted { $0.lexicographicallyPrecedes($1) }
        guard names.count <= dropInLimit else {
            throw ConfigError(file: folder, line: 0, "more than \(dropInLimit) drop-ins")
        }
        return names.map { "\(folder)/\(String(decoding: $0, as: UTF8.self))" }
    }

    private static func readText(_ path: String, missingIsNone: Bool) throws(ConfigError) -> String? {
        let data: [UInt8]
        do throws(Errno) {
            data = try FileDescriptor.readFile(path, limit: (1 << 20) + 1)
        } catch where error.rawValue == ENOENT && missingIsNone {
            return nil
        } catch where error.rawValue == ENOENT {
            throw ConfigError(file: path, line: 0, "no such file")
        } catch {
            throw ConfigError(file: path, line: 0, "cannot be read: \(Errno(error.rawValue))")
        }
        guard data.count <= 1 << 20 else { throw ConfigError(file: path, line: 0, "larger than 1 MiB") }
        // Decoded, then compared with what was read: decoding replaces what is
        // not UTF-8, and the specialized decoder is cheaper at a program's
        // start than the generic `String(validating:as:)`.
        let text = String(decoding: data, as: UTF8.self)
        guard text.utf8.elementsEqual(data) else {
            throw ConfigError(file: path, line: 0, "not valid UTF-8 text")
        }
        return text
    }
}
