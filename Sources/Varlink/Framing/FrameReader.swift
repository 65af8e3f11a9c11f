#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Splits a byte stream into NUL-terminated frames, incrementally.
///
/// Bytes of an unfinished frame are kept between calls, up to
/// ``maximumFrameSize``: a peer that sends more than that without a NUL is
/// rejected as soon as the limit is passed, not after it has been buffered.
/// A caller that stops mid-read (its connection is busy) finds the rest held
/// back for later, so stopping never loses a call.
///
/// Not thread-safe: one reader per connection, used by one thread.
package struct FrameReader: Sendable {
    /// The default limit on one frame: 1 MiB.
    package static let defaultMaximumFrameSize = 1 << 20

    /// The largest frame accepted, in bytes, not counting its NUL.
    package let maximumFrameSize: Int
    /// Whether bytes are zeroed once served, and buffers zeroed before they
    /// are given back or outgrown: for streams that may carry secrets.
    package let wipesConsumedBytes: Bool
    private var partial: [UInt8] = []
    /// Bytes not yet split, left when `body` asked to stop.
    private var backlog: [UInt8] = []

    /// A reader accepting frames of up to `maximumFrameSize` bytes.
    package init(maximumFrameSize: Int = FrameReader.defaultMaximumFrameSize, wipesConsumedBytes: Bool = false) {
        precondition(maximumFrameSize > 0, "FrameReader: maximumFrameSize must be positive")
        self.maximumFrameSize = maximumFrameSize
        self.wipesConsumedBytes = wipesConsumedBytes
    }

    /// Bytes of an unfinished frame held from earlier calls.
    package var bufferedByteCount: Int { partial.count }

    /// Whether bytes are held back because `body` asked to stop: the next
    /// ``consume(_:_:)`` or ``consumeBacklog(_:)`` serves them first.
    package var hasBacklog: Bool { !backlog.isEmpty }

    /// Feeds `bytes` and calls `body` with each completed frame, without its NUL,
    /// in order. A frame lying wholly inside `bytes` is passed without copying.
    /// - Parameter body: returns false to stop; the rest of `bytes` is kept, in
    ///   order, ahead of whatever the next call brings.
    /// - Throws: ``FrameReaderError/frameTooLarge(limit:)`` once a frame grows
    ///   past the limit; the reader should then be discarded.
    package mutating func consume(
        _ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool
    ) throws(FrameReaderError) {
        guard !backlog.isEmpty else { return try split(bytes, body) }
        holdBack(bytes)
        try consumeBacklog(body)
    }

    /// Holds `bytes` back unsplit, behind any held already, for
    /// ``consumeBacklog(_:)``.
    package mutating func holdBack(_ bytes: UnsafeRawBufferPointer) {
        append(bytes, to: &backlog)
    }

    /// Calls `body` with the completed frames held back when it last asked to
    /// stop, as ``consume(_:_:)`` does with new bytes.
    package mutating func consumeBacklog(_ body: (UnsafeRawBufferPointer) -> Bool) throws(FrameReaderError) {
        guard !backlog.isEmpty else { return }
        // Taken out first: `split` keeps what it does not serve in `backlog`.
        var held = backlog
        backlog = []
        let result = held.withUnsafeBytes { bytes in
            Result { () throws(FrameReaderError) in try split(bytes, body) }
        }
        if wipesConsumedBytes { held.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        try result.get()
    }

    private mutating func split(
        _ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool
    ) throws(FrameReaderError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            guard let terminator = memchr(base + offset, 0, remaining) else {
                guard partial.count + remaining <= maximumFrameSize else {
                    throw .frameTooLarge(limit: maximumFrameSize)
                }
                append(UnsafeRawBufferPointer(rebasing: bytes[offset...]), to: &partial)
                return
            }
            let length = UnsafeRawPointer(terminator) - (base + offset)
            guard partial.count + length <= maximumFrameSize else { throw .frameTooLarge(limit: maximumFrameSize) }
            let keepGoing: Bool
            if partial.isEmpty {
                keepGoing = body(UnsafeRawBufferPointer(start: base + offset, count: length))
            } else {
                append(UnsafeRawBufferPointer(start: base + offset, count: length), to: &partial)
                keepGoing = partial.withUnsafeBytes(body)
                if wipesConsumedBytes { partial.withUnsafeMutableBytes { SecretBytes.zero($0) } }
                // Keep a small buffer for the next partial frame; give big ones back.
                partial.removeAll(keepingCapacity: partial.capacity <= 16 * 1024)
            }
            offset += length + 1
            if !keepGoing {
                append(UnsafeRawBufferPointer(rebasing: bytes[offset...]), to: &backlog)
                return
            }
        }
    }

    /// Appends `bytes` to `buffer`; when wiping, grows it by hand so the
    /// outgrown storage is zeroed before it is freed.
    private func append(_ bytes: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        if wipesConsumedBytes, buffer.count + bytes.count > buffer.capacity {
            var grown: [UInt8] = []
            grown.reserveCapacity(max(buffer.capacity * 2, buffer.count + bytes.count))
            grown.append(contentsOf: buffer)
            buffer.withUnsafeMutableBytes { SecretBytes.zero($0) }
            buffer = grown
        }
        buffer.append(contentsOf: bytes)
    }

    /// Feeds `bytes` and returns the completed frames as arrays; for tests and
    /// callers that prefer values to callbacks.
    package mutating func frames(from bytes: [UInt8]) throws(FrameReaderError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(FrameReaderError) in
                try consume(buffer) { frame in
                    frames.append(Array(frame))
                    return true
                }
            }
        }
        try result.get()
        return frames
    }
}
