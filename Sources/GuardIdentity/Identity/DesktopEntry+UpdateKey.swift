import UpdateSignature

// Apart from DesktopEntry.swift, which the desktop-entry fuzz target
// compiles on its own with SystemKit alone.
extension DesktopEntry {
    /// The update key the entry declares, when it declares exactly one and
    /// it is a well-formed `ed25519:` key; nil otherwise.
    package var updateKey: UpdateKey? {
        guard updateKeys.count == 1, let declaration = updateKeys.first else { return nil }
        return try? UpdateKey(declaration: declaration)
    }
}
