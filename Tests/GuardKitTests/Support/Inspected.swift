import GuardKit
import SystemKit
import GuardIdentity

/// `text` as the Guard reads a desktop entry: by the real inspector, handed
/// the text on a pipe.
func inspectedEntry(_ text: String) throws -> DesktopEntry {
    let (read, write) = try FileDescriptor.pipe()
    try write.writeAll(Array(text.utf8))
    write.close()
    return try Inspector.standard.desktopEntry(read)
}
