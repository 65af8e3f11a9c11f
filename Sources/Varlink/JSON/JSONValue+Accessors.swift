import SystemKit

extension JSONValue {
    /// The member `key` of an object; nil for a missing key or a non-object.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// Element `index` of an array; nil when out of range or not an array.
    package subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, or nil for any other kind of value.
    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The secret's bytes, or nil for any other kind of value (a plain string included).
    package var secretValue: SecretBytes? {
        if case .secret(let value) = self { return value }
        return nil
    }

    /// Bytes of secrets anywhere in the value; 0 when it holds none.
    package var secretByteCount: Int {
        switch self {
        case .secret(let secret): secret.count
        case .array(let elements): elements.reduce(0) { $0 + $1.secretByteCount }
        case .object(let object): object.members.reduce(0) { $0 + $1.value.secretByteCount }
        default: 0
        }
    }

    /// The boolean, or nil for any other kind of value.
    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The integer, or nil for any other kind of value (a fractional or
    /// out-of-range number included: no silent rounding).
    package var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, from either number case.
    package var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The elements, or nil for any other kind of value.
    package var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, or nil for any other kind of value.
    package var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
