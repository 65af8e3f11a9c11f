import FamilyControlsModel

/// The Varlink interface the Guard serves: `text` is
/// `Config/org.familycontrols.guard.varlink`, embedded at build time by the
/// EmbedInterface plugin, so the interface served is the file that ships.
enum GuardInterface {
    static let name = GuardEndpoint.interface
}
