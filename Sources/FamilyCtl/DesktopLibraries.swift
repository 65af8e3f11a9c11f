import SystemKit

/// What the verbs of familyctl that need more than its common ones get from
/// the libraries familyctl itself does not load, so that every other verb
/// starts without them: the desktop's notification server over sd-bus
/// (libsystemd and its tail) for `agent`, and libqrencode for `code
/// enroll`. Only the `familycontrols-agent` program has them; familyctl
/// becomes that program to run those verbs (``AgentProgram``).
package struct DesktopLibraries: Sendable {
    /// Opens the desktop's notification server.
    package typealias NotificationServerOpener =
        @Sendable () throws(NotificationServerUnavailable) -> any NotificationServer
    /// A QR code of the text for a terminal, or nil when it does not fit one.
    package typealias QRCodeDrawer = @Sendable (SecretBytes) -> String?

    package var openNotificationServer: NotificationServerOpener
    package var drawQRCode: QRCodeDrawer

    package init(openNotificationServer: @escaping NotificationServerOpener, drawQRCode: @escaping QRCodeDrawer) {
        self.openNotificationServer = openNotificationServer
        self.drawQRCode = drawQRCode
    }
}
