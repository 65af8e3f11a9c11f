/// A JSON object: string keys, unique, in the order they were read or added.
///
/// Varlink messages are small, so members live in one array and lookup is a
/// linear scan: cheaper than hashing for the handful of keys a call carries.
package struct JSONObject: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One key and its value.
    package typealias Member = (key: String, value: JSONValue)

    /// The members in order.
    package private(set) var members: [Member]

    /// An empty object.
    package init() { members = [] }

    /// An object with `members` in that order; a repeated key is a programmer error and traps.
    package init(_ members: [Member]) {
        var seen = Set<String>()
        for member in members {
            precondition(seen.insert(member.key).inserted, "JSONObject: duplicate key \"\(member.key)\"")
        }
        self.members = members
    }

    /// For the parser, which has already rejected duplicate keys.
    init(uniqueMembers members: [Member]) { self.members = members }

    /// An object literal; a repeated key is a programmer error and traps.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The value for `key`; assigning nil removes the member, assigning a value
    /// replaces it in place or appends it.
    package subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            let index = members.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append((key: key, value: value))
            case (nil, nil): break
            }
        }
    }

    /// The keys in order.
    package var keys: [String] { members.map(\.key) }

    package var startIndex: Int { members.startIndex }
    package var endIndex: Int { members.endIndex }
    package subscript(position: Int) -> Member { members[position] }

    /// Same keys with equal values, in any order.
    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members where rhs[member.key] != member.value { return false }
        return true
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text.
    package var description: String { JSONValue.object(self).description }
}
