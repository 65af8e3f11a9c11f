import Foundation
@_exported import FamilyControlsModel

/// `localizedDescription` is ``FamilyControlsError/errorDescription``.
extension FamilyControlsError: LocalizedError {}

extension FamilyControlsError: CustomNSError {
    /// `FamilyControls.FamilyControlsError`, Apple's domain.
    public static var errorDomain: String { "FamilyControls.FamilyControlsError" }
    /// Apple's code, 0–8 (8 is `unauthorized`, the newer SDK's).
    public var errorCode: Int { rawValue }
    public var errorUserInfo: [String: Any] {
        [NSLocalizedDescriptionKey: errorDescription ?? caseName]
    }
}
