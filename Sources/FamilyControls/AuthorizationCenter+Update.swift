import Foundation
import GuardProtocol

/// How ``AuthorizationCenter/requestUpdate()`` let the new version in.
///
/// Linux only: Apple's FamilyControls has no update call (the App Store
/// updates apps).
public enum AppUpdateOutcome: Sendable, Hashable {
    /// Signed by an update key the approval trusts (the one a parent or
    /// guardian was shown when approving, or one the site configured),
    /// and newer than every version before: swapped in at once.
    case signed
    /// Otherwise: a parent or guardian approved it from their own session
    /// (`familyctl approve ID`).
    case approvedByGuardian
}

extension AuthorizationCenter {
    /// Where an app in an app root stages its new version: the folder
    /// `.APPID.update` beside its approved folder `ROOT/APPID`, made by the
    /// app's user, on the same filesystem (Linux only).
    /// - Parameter appDirectory: the approved folder, `ROOT/APPID`.
    public static func updateStagingDirectory(forAppAt appDirectory: URL) -> URL {
        let appID = appDirectory.standardizedFileURL.lastPathComponent
        return appDirectory.standardizedFileURL.deletingLastPathComponent().appendingPathComponent(".\(appID).update")
    }

    /// Asks the Guard to swap in the new version this app staged at
    /// ``updateStagingDirectory(forAppAt:)`` (Linux only: Apple's API has no
    /// update call).
    ///
    /// The Guard locks the staged folder first, so stop writing to it before
    /// calling. A version that keeps the app ID and `X-FamilyControls=true`
    /// and is signed by an update key the approval trusts (declaring it,
    /// with a newer `X-FamilyControls-Version=`) is swapped in at once; any other waits for a parent or guardian, which ``prompter``
    /// is told of (a `pending` prompt). Afterwards the app's folder holds the
    /// new version, locked, and the old version is left, released, at the
    /// staging folder for the app to remove. The status stays approved.
    /// - Returns: how the update was let in.
    /// - Throws: ``FamilyControlsError``: `.restricted` when the update is
    ///   refused (the capability dropped, the app ID changed, a guardian said
    ///   no, the app not approved), `.invalidArgument` for a staging folder
    ///   that is missing, a link, someone else's, on another filesystem, or
    ///   still open for writing, `.authorizationCanceled`, `.unavailable`;
    ///   ``lastErrorMessage`` says why.
    public func requestUpdate() async throws -> AppUpdateOutcome {
        let (backend, generation) = currentBackend
        return try settled(await backend.update(prompter: prompter), generation: generation)
    }
}
