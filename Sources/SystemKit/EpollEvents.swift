/// Readiness flags of an epoll registration or event (`EPOLLIN`, `EPOLLOUT`, …).
public struct EpollEvents: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `EPOLLIN`: data (or a connection, on a listener) is waiting.
    public static let readable = EpollEvents(rawValue: 0x001)
    /// `EPOLLOUT`: a write would not block.
    public static let writable = EpollEvents(rawValue: 0x004)
    /// `EPOLLERR`: always reported; no need to ask for it.
    public static let error = EpollEvents(rawValue: 0x008)
    /// `EPOLLHUP`: always reported; both directions are shut.
    public static let hangUp = EpollEvents(rawValue: 0x010)
    /// `EPOLLRDHUP`: the peer shut its writing side (or closed).
    public static let readHangUp = EpollEvents(rawValue: 0x2000)
}
