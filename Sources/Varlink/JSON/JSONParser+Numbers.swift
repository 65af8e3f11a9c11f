extension JSONParser {
    /// Parses a number starting at `-` or a digit. Integers without fraction
    /// or exponent that fit in `Int64` stay exact; the rest become `Double`.
    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let bytes = input
        let end = bytes.count
        let start = offset
        var index = start
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }

        var magnitude: UInt64 = 0
        var overflowed = false
        guard index < end, Self.isDigit(bytes[index]) else { throw JSONParseError(.invalidNumber, at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < end, Self.isDigit(bytes[index]) { throw JSONParseError(.invalidNumber, at: start) }
        } else {
            while index < end, Self.isDigit(bytes[index]) {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                overflowed = overflowed || o1 || o2
                magnitude = sum
                index += 1
            }
        }

        var isInteger = true
        if index < end, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            index = try digits(from: index, numberStart: start)
        }
        if index < end, bytes[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            index = try digits(from: index, numberStart: start)
        }
        offset = index

        if isInteger, !overflowed {
            if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- magnitude)) }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text) else { throw JSONParseError(.invalidNumber, at: start) }
        guard value.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
        return .double(value)
    }

    /// Skips one or more digits starting at `index`.
    private func digits(from index: Int, numberStart: Int) throws(JSONParseError) -> Int {
        let bytes = input
        var index = index
        guard index < bytes.count, Self.isDigit(bytes[index]) else {
            throw JSONParseError(.invalidNumber, at: numberStart)
        }
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        return index
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}
