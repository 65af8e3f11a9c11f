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
    /// The approval trusts no update key (none was shown to a guardian nor
    /// configured), so only a guardian may update it.
    case noUpdateKey(appID: String)
    /// Signed by a trusted key, but declaring another key (or none) for the
    /// versions after it: a guardian is shown the change.
    case keyChanged(from: UpdateKey?, to: UpdateKey?)
    /// Signed by a trusted key, but not newer than every version the
    /// approval has had (or with no version that can be compared).
    case notNewer(version: String?, highest: String?)
    /// A desktop entry declares its update key more than once.
    case ambiguousUpdateKey(which: String, appID: String)
    /// The staged version's signature is missing or not a trusted key's.
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
            "no update key is trusted for the approval of \(appID) (none was shown to a parent or guardian when it "
                + "was approved, nor configured by an administrator), so its updates need a guardian"
        case .keyChanged(let from, let to):
            "the staged version changes the update key from \(Self.shown(from)) to \(Self.shown(to))"
        case .notNewer(let version, let highest):
            "the staged version \(version.map { DisplayText.sanitized($0, limit: 64) } ?? "(no version)") is not newer than "
                + "\(highest ?? "(no version)"), the highest this approval has had"
        case .ambiguousUpdateKey(let which, let appID):
            "the \(which) version's \(appID).desktop declares \(UpdateKey.desktopEntryKey)= more than once"
        case .signature(let error):
            "the staged version is not signed by a key the approval trusts: \(error)"
        }
    }

    /// A key as a guardian sees it: `ed25519:BASE64`, or "none".
    package static func shown(_ key: UpdateKey?) -> String { key?.declaration ?? "none" }
}
