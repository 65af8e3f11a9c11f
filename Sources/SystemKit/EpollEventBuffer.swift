/// Memory for `epoll_wait(2)` results, in the kernel's `struct epoll_event` layout.
///
/// Not thread-safe: one waiter owns it.
public final class EpollEventBuffer {
    // glibc declares struct epoll_event packed on x86-64 (12 bytes, data at
    // offset 4) and naturally aligned elsewhere (16 bytes, data at offset 8).
    #if arch(x86_64)
    static let stride = 12
    static let dataOffset = 4
    #else
    static let stride = 16
    static let dataOffset = 8
    #endif

    /// How many events one wait can return.
    public let capacity: Int
    let storage: UnsafeMutableRawPointer

    /// Room for `capacity` events.
    public init(capacity: Int) {
        precondition(capacity > 0, "EpollEventBuffer needs room for at least one event")
        self.capacity = capacity
        storage = .allocate(byteCount: capacity * Self.stride, alignment: 8)
    }

    deinit { storage.deallocate() }

    /// The flags and registration data of event `index`.
    public subscript(index: Int) -> (events: EpollEvents, data: UInt64) {
        precondition(index >= 0 && index < capacity, "epoll event index out of range")
        let base = storage + index * Self.stride
        let events = base.loadUnaligned(as: UInt32.self)
        let data = base.loadUnaligned(fromByteOffset: Self.dataOffset, as: UInt64.self)
        return (EpollEvents(rawValue: events), data)
    }

    static func store(_ events: EpollEvents, _ data: UInt64, at base: UnsafeMutableRawPointer) {
        base.storeBytes(of: events.rawValue, as: UInt32.self)
        base.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
    }
}
