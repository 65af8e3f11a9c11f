internal import CSystem

/// Memory for `epoll_wait(2)` results: an array of the kernel's `struct epoll_event`,
/// laid out and read by CSystem (glibc packs it on x86-64 only).
///
/// Not thread-safe: one waiter owns it.
public final class EpollEventBuffer {
    /// How many events one wait can return.
    public let capacity: Int
    let storage: OpaquePointer

    /// Room for `capacity` events.
    public init(capacity: Int) {
        precondition(capacity > 0 && capacity <= Int(CInt.max), "EpollEventBuffer needs room for 1 to Int32.max events")
        self.capacity = capacity
        guard let storage = csystem_epoll_events_allocate(CInt(capacity)) else {
            fatalError("out of memory for \(capacity) epoll events")
        }
        self.storage = storage
    }

    deinit { csystem_epoll_events_free(storage) }

    /// The flags and registration data of event `index`.
    public subscript(index: Int) -> (events: EpollEvents, data: UInt64) {
        precondition(index >= 0 && index < capacity, "epoll event index out of range")
        let events = csystem_epoll_event_flags(storage, CInt(index))
        let data = csystem_epoll_event_data(storage, CInt(index))
        return (EpollEvents(rawValue: events), data)
    }
}
