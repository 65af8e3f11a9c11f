/// The default `objectWillChange` publisher of each object that asked for it,
/// keyed by the object's identity. Entries hold the object weakly; an entry
/// whose object is gone is replaced when its identity is reused and dropped
/// when the table grows.
enum ObjectWillChangeRegistry {
    private struct Entry {
        weak var object: AnyObject?
        let publisher: ObservableObjectPublisher
    }
    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var pruneAt = 64
    }
    private static let table = LockedState(Table())

    /// The publisher of `object`, made on first use.
    static func publisher(for object: AnyObject) -> ObservableObjectPublisher {
        let key = ObjectIdentifier(object)
        return table.withLock { table in
            if let entry = table.entries[key], entry.object === object { return entry.publisher }
            let publisher = ObservableObjectPublisher()
            table.entries[key] = Entry(object: object, publisher: publisher)
            if table.entries.count >= table.pruneAt {
                table.entries = table.entries.filter { $0.value.object != nil }
                table.pruneAt = max(64, 2 * table.entries.count)
            }
            return publisher
        }
    }

    /// The publisher of `object` if it has asked for one.
    static func existingPublisher(for object: AnyObject) -> ObservableObjectPublisher? {
        let key = ObjectIdentifier(object)
        return table.withLock { table in
            guard let entry = table.entries[key], entry.object === object else { return nil }
            return entry.publisher
        }
    }
}
