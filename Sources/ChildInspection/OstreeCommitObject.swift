/// The parts of an ostree commit object (`repo/objects/XX/….commit`) the
/// Guard decides an update from, read by the inspector: the parent commit, the time, and the ref
/// the commit says it belongs to.
///
/// The object is a GVariant of type `(a{sv}aya(say)sstayay)` in its
/// serialized form (GLib's "GVariant serialization", little-endian framing
/// offsets, the timestamp big-endian as ostree writes it), read here by hand
/// as hostile input: at most ``sizeLimit`` bytes, every offset checked to lie
/// inside the object and to run forward, the parent exactly 0 or 32 bytes.
/// Only the members used are decoded; `ostree.ref-binding` is looked up in
/// the metadata dictionary, whose other entries are skipped.
package struct OstreeCommitObject: Hashable, Sendable {
    /// The parent commit as 64 lower-case hex digits; nil for a commit with none.
    package var parent: String?
    /// Seconds since the epoch, as the commit records it.
    package var timestamp: UInt64
    /// The refs of `ostree.ref-binding`; empty when the commit binds none.
    package var refBindings: [String]

    /// A commit object larger than this is refused (ostree's own bound on
    /// metadata objects is 10 MiB; a Flatpak commit is a few KiB).
    package static let sizeLimit = 1 << 20

    /// Parses a serialized commit object.
    /// - Throws: ``OstreeCommitError`` naming the first part that does not hold.
    package init(parsing bytes: [UInt8]) throws(OstreeCommitError) {
        guard bytes.count <= Self.sizeLimit else { throw .tooLarge(bytes.count) }
        let members = try Self.tupleMembers(bytes, count: 8, fixed: [5: 8], alignments: [0: 8, 5: 8])
        let parent = members[1]
        switch parent.count {
        case 0: self.parent = nil
        case 32: self.parent = Self.hex(bytes[parent])
        default: throw .malformed("a parent checksum of \(parent.count) bytes")
        }
        let time = members[5]
        guard time.count == 8 else { throw .malformed("a timestamp of \(time.count) bytes") }
        timestamp = bytes[time].reduce(0) { $0 << 8 | UInt64($1) }
        refBindings = try Self.refBindings(in: bytes, metadata: members[0])
    }

    /// The 64 hex digits of `bytes`.
    package static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - GVariant framing

    /// The byte size of one framing offset in a container of `size` bytes.
    private static func offsetSize(_ size: Int) -> Int {
        size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffff_ffff ? 4 : 8
    }

    private static func readOffset(_ bytes: [UInt8], at index: Int, size: Int) -> Int {
        var value = 0
        for k in 0..<size { value |= Int(bytes[index + k]) << (8 * k) }
        return value
    }

    /// The byte ranges of the `count` members of a tuple spanning
    /// `range` of `bytes`; members listed in `fixed` have that fixed size,
    /// every other is variable-sized (framed by an offset at the end, the
    /// last member excepted).
    package static func tupleMembers(_ bytes: [UInt8], in range: Range<Int>? = nil, count: Int,
                                     fixed: [Int: Int], alignments: [Int: Int]) throws(OstreeCommitError) -> [Range<Int>] {
        let whole = range ?? 0..<bytes.count
        let size = whole.count
        let width = offsetSize(size)
        var framingEnd = whole.upperBound   // offsets are read from the end, backwards
        var start = whole.lowerBound
        var members: [Range<Int>] = []
        for index in 0..<count {
            let alignment = alignments[index] ?? 1
            let relative = start - whole.lowerBound
            start = whole.lowerBound + (relative + alignment - 1) / alignment * alignment
            let end: Int
            if let length = fixed[index] {
                end = start + length
            } else if index == count - 1 {
                end = framingEnd
            } else {
                framingEnd -= width
                guard framingEnd >= whole.lowerBound, framingEnd + width <= whole.upperBound else {
                    throw .malformed("framing offsets past the object's start")
                }
                end = whole.lowerBound + readOffset(bytes, at: framingEnd, size: width)
            }
            guard start <= end, end <= framingEnd else { throw .malformed("member \(index) out of bounds") }
            members.append(start..<end)
            start = end
        }
        return members
    }

    /// The offsets closing an array of variable-sized elements spanning `range`.
    private static func arrayElements(_ bytes: [UInt8], in range: Range<Int>) throws(OstreeCommitError) -> [Range<Int>] {
        guard !range.isEmpty else { return [] }
        let width = offsetSize(range.count)
        let last = readOffset(bytes, at: range.upperBound - width, size: width)
        guard last <= range.count - width else { throw .malformed("an array's framing offset out of bounds") }
        let table = range.lowerBound + last
        let slots = (range.upperBound - table)
        guard slots % width == 0 else { throw .malformed("an array's framing table") }
        var elements: [Range<Int>] = []
        var start = range.lowerBound
        var slot = table
        while slot < range.upperBound {
            let end = range.lowerBound + readOffset(bytes, at: slot, size: width)
            guard start <= end, end <= table else { throw .malformed("an array element out of bounds") }
            elements.append(start..<end)
            // Dictionary entries and variants are 8-aligned; the next starts at the next multiple.
            start = end
            slot += width
        }
        return elements
    }

    /// The strings of `ostree.ref-binding` (`as`) in the metadata `a{sv}`.
    private static func refBindings(in bytes: [UInt8], metadata: Range<Int>) throws(OstreeCommitError) -> [String] {
        for var entry in try arrayElements(bytes, in: metadata) {
            // Each entry starts 8-aligned relative to the dictionary.
            let relative = entry.lowerBound - metadata.lowerBound
            let aligned = metadata.lowerBound + (relative + 7) / 8 * 8
            // An entry shorter than its padding is no entry (and no range).
            guard aligned < entry.upperBound else { throw .malformed("an empty metadata entry") }
            entry = aligned..<entry.upperBound
            // {sv}: the key (framed by the entry's one offset), then the variant.
            let parts = try tupleMembers(bytes, in: entry, count: 2, fixed: [:], alignments: [1: 8])
            let key = parts[0]
            guard !key.isEmpty, bytes[key.upperBound - 1] == 0 else { throw .malformed("a metadata key without its NUL") }
            guard bytes[key.lowerBound..<(key.upperBound - 1)].elementsEqual("ostree.ref-binding".utf8) else { continue }
            // A variant: the value, a NUL, the type string.
            let variant = parts[1]
            guard let zero = bytes[variant].lastIndex(of: 0) else { throw .malformed("a variant without its type") }
            guard bytes[(zero + 1)..<variant.upperBound].elementsEqual("as".utf8) else {
                throw .malformed("ostree.ref-binding is not an array of strings")
            }
            var refs: [String] = []
            for string in try arrayElements(bytes, in: variant.lowerBound..<zero) {
                guard !string.isEmpty, bytes[string.upperBound - 1] == 0 else { throw .malformed("a ref without its NUL") }
                let text = bytes[string.lowerBound..<(string.upperBound - 1)]
                guard text.count <= 1024, !text.contains(0) else { throw .malformed("a ref binding") }
                refs.append(String(decoding: text, as: UTF8.self))
            }
            return refs
        }
        return []
    }
}

/// Why a commit object was not read.
package enum OstreeCommitError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooLarge(Int)
    case malformed(String)

    package var description: String {
        switch self {
        case .tooLarge(let size): "the commit object is \(size) bytes, more than \(OstreeCommitObject.sizeLimit)"
        case .malformed(let what): "the commit object is malformed: \(what)"
        }
    }
}

/// The remote a deployment came from: `origin`, the first member of a
/// Flatpak deployment's `deploy` file (a GVariant `(ssasta{sv})`), read by
/// the inspector from the child's own installation.
package enum DeploymentOrigin {
    /// The largest `deploy` file read.
    package static let sizeLimit = 1 << 20

    /// The origin named in `bytes`, as written (its NUL dropped).
    /// - Throws: ``OstreeCommitError/malformed(_:)`` when the framing does not hold.
    package static func origin(in bytes: [UInt8]) throws(OstreeCommitError) -> String {
        guard bytes.count <= sizeLimit else { throw .tooLarge(bytes.count) }
        let members = try OstreeCommitObject.tupleMembers(bytes, count: 5, fixed: [3: 8], alignments: [3: 8, 4: 8])
        let origin = members[0]
        guard !origin.isEmpty, bytes[origin.upperBound - 1] == 0 else { throw .malformed("no origin") }
        let text = bytes[origin.lowerBound..<(origin.upperBound - 1)]
        guard !text.contains(0) else { throw .malformed("an origin holding a NUL") }
        return String(decoding: text, as: UTF8.self)
    }
}
