// What `import FamilyControls` brings besides its own types: the part of
// Combine apps use, as Apple's SDK brings it with SwiftUI.
@_exported import FamilyControlsCombine
