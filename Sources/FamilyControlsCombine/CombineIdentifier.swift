import Synchronization

/// Identifies a subscriber or subscription: Combine's `CombineIdentifier`.
public struct CombineIdentifier: Hashable, Sendable, CustomStringConvertible {
    private enum Source: Hashable, Sendable {
        case object(ObjectIdentifier)
        case counter(UInt64)
    }
    private static let counter = Mutex<UInt64>(0)
    private let source: Source

    /// A new identifier, different from every other.
    public init() {
        source = .counter(Self.counter.withLock { count in
            count += 1
            return count
        })
    }

    /// The identifier of `object`.
    public init(_ object: AnyObject) {
        source = .object(ObjectIdentifier(object))
    }

    public var description: String {
        switch source {
        case .object(let identifier): "object \(identifier)"
        case .counter(let count): "#\(count)"
        }
    }
}

/// A type with a ``CombineIdentifier``; classes get one from their identity.
public protocol CustomCombineIdentifierConvertible {
    /// The value's identifier.
    var combineIdentifier: CombineIdentifier { get }
}

extension CustomCombineIdentifierConvertible where Self: AnyObject {
    public var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }
}
