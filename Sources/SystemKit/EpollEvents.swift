internal import CSystem

/// Readiness flags of an epoll registration or event (`EPOLLIN`, `EPOLLOUT`, …).
public struct EpollEvents: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `EPOLLIN`: data (or a connection, on a listener) is waiting.
    public static let readable = EpollEvents(rawValue: CSYSTEM_EPOLLIN)
    /// `EPOLLOUT`: a write would not block.
    public static let writable = EpollEvents(rawValue: CSYSTEM_EPOLLOUT)
    /// `EPOLLERR`: always reported; no need to ask for it.
    public static let error = EpollEvents(rawValue: CSYSTEM_EPOLLERR)
    /// `EPOLLHUP`: always reported; both directions are shut.
    public static let hangUp = EpollEvents(rawValue: CSYSTEM_EPOLLHUP)
    /// `EPOLLRDHUP`: the peer shut its writing side (or closed).
    public static let readHangUp = EpollEvents(rawValue: CSYSTEM_EPOLLRDHUP)
}
