/// Why an approved per-user Flatpak app was not moved into the Guard's
/// installation. In every case at least one copy of the app is left
/// installed and runnable: the child's, unless the move got past the
/// point where the Guard's copy was complete and checked.
package enum FlatpakMoveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request names no valid app ID, architecture, branch or commit.
    case invalidRequest(String)
    /// The per-user deployment is not the one the Guard opened, or cannot be reached safely.
    case deployment(String)
    /// The child's remote configuration, read as hostile input, was refused.
    case remoteRefused(String)
    /// A flatpak command failed.
    case command(String, String)
    /// The Guard's installation does not hold what the move expects.
    case installation(String)
    /// The move's journal cannot be written or read.
    case journal(String)
    /// The move service could not be reached, or refused the move.
    case service(String)

    package var description: String {
        switch self {
        case .invalidRequest(let why): "the move was refused: \(why)"
        case .deployment(let why): "the per-user deployment: \(why)"
        case .remoteRefused(let why): "the app's remote was refused: \(why)"
        case .command(let command, let how): "\(command): \(how)"
        case .installation(let why): "the Guard's Flatpak installation: \(why)"
        case .journal(let why): "the move's journal: \(why)"
        case .service(let why): "the Flatpak move service: \(why)"
        }
    }
}
