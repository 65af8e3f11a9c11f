import SystemKit
import UpdateSignature

/// Why a staged version of an approved app may not replace it on its
/// signature alone; each case says what the app's developer must fix.
package enum UpdateRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// A desktop entry (`which` is "approved" or "staged") cannot be read as one.
    case desktopEntryUnreadable(which: String, path: String, String)
    /// The staged version has no `APPID.desktop` of the approved app's ID.
    case appIDMissing(appID: String)
    /// The staged version brings the desktop entry of another app ID.
    case appIDChanged(appID: String, found: String)
    /// The staged version's desktop entry no longer declares `X-FamilyControls=true`.
    case capabilityDropped(appID: String)
    /// The approved version declares no update key, so only a guardian may update it.
    case noUpdateKey(appID: String)
    /// A desktop entry declares its update key more than once.
    case ambiguousUpdateKey(which: String, appID: String)
    /// The approved version's declared key, or the staged version's signature, is not accepted.
    case signature(UpdateSignatureError)

    package var description: String {
        switch self {
        case .desktopEntryUnreadable(let which, let path, let problem):
            "the \(which) version's desktop entry \(DisplayText.sanitized(path)) cannot be read: \(problem)"
        case .appIDMissing(let appID):
            "the staged version has no \(appID).desktop: an update cannot change the app ID"
        case .appIDChanged(let appID, let found):
            "the staged version brings \(DisplayText.sanitized(found)): an update of \(appID) cannot change the app ID"
        case .capabilityDropped(let appID):
            "the staged version's \(appID).desktop does not declare X-FamilyControls=true: an update cannot remove the capability"
        case .noUpdateKey(let appID):
            "the approved version of \(appID) declares no \(UpdateKey.desktopEntryKey)=, so its updates need a guardian"
        case .ambiguousUpdateKey(let which, let appID):
            "the \(which) version's \(appID).desktop declares \(UpdateKey.desktopEntryKey)= more than once"
        case .signature(let error):
            "the staged version is not signed by the approved version's key: \(error)"
        }
    }
}
