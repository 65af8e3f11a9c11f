/// Why a byte stream cannot be split into Varlink frames.
package enum FrameReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame grew past the limit before its terminating NUL arrived.
    case frameTooLarge(limit: Int)

    package var description: String {
        switch self {
        case .frameTooLarge(let limit): "message exceeds the \(limit)-byte limit without a NUL terminator"
        }
    }
}
