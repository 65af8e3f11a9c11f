import Testing
@testable import Varlink

@Suite("Frame reader")
struct FrameReaderTests {
    @Test func splitsFramesAtNULBytes() throws {
        var reader = FrameReader()
        let frames = try reader.frames(from: Array("{\"a\":1}\0{}\0".utf8))
        #expect(frames == [Array("{\"a\":1}".utf8), Array("{}".utf8)])
        #expect(reader.bufferedByteCount == 0)
    }

    @Test func joinsAFrameSplitAcrossReads() throws {
        var reader = FrameReader()
        #expect(try reader.frames(from: Array("{\"meth".utf8)).isEmpty)
        #expect(reader.bufferedByteCount == 6)
        #expect(try reader.frames(from: Array("od\":1}".utf8)).isEmpty)
        let frames = try reader.frames(from: Array("\0{}".utf8))
        #expect(frames == [Array("{\"method\":1}".utf8)])
        #expect(reader.bufferedByteCount == 2)
    }

    @Test func anEmptyFrameIsAFrame() throws {
        var reader = FrameReader()
        #expect(try reader.frames(from: [0, 0]) == [[], []])
    }

    @Test func aFrameOfExactlyTheLimitIsAccepted() throws {
        var reader = FrameReader(maximumFrameSize: 8)
        let frames = try reader.frames(from: Array(repeating: 0x41, count: 8) + [0])
        #expect(frames.first?.count == 8)
    }

    @Test func aCompleteFrameOverTheLimitIsRejected() {
        var reader = FrameReader(maximumFrameSize: 8)
        #expect(throws: FrameReaderError.frameTooLarge(limit: 8)) {
            try reader.frames(from: Array(repeating: 0x41, count: 9) + [0])
        }
    }

    @Test func anUnterminatedFrameIsRejectedAsSoonAsItPassesTheLimit() throws {
        var reader = FrameReader(maximumFrameSize: 1024)
        let chunk = [UInt8](repeating: 0x41, count: 512)
        _ = try reader.frames(from: chunk)
        _ = try reader.frames(from: chunk)
        #expect(reader.bufferedByteCount == 1024)
        #expect(throws: FrameReaderError.frameTooLarge(limit: 1024)) { try reader.frames(from: [0x41]) }
    }

    @Test func tenMebibytesWithoutNULNeverBufferMoreThanTheLimit() {
        var reader = FrameReader()
        let chunk = [UInt8](repeating: 0x20, count: 64 * 1024)
        var fed = 0
        var failure: FrameReaderError?
        while fed < 10 << 20, failure == nil {
            do { _ = try reader.frames(from: chunk) } catch { failure = error }
            fed += chunk.count
        }
        #expect(failure == .frameTooLarge(limit: FrameReader.defaultMaximumFrameSize))
        #expect(fed <= FrameReader.defaultMaximumFrameSize + chunk.count)
        #expect(reader.bufferedByteCount <= FrameReader.defaultMaximumFrameSize)
    }

    @Test func stoppingEarlyKeepsTheRestForLaterInOrder() throws {
        var reader = FrameReader()
        var seen: [String] = []
        func take(_ frame: UnsafeRawBufferPointer) -> Bool {
            seen.append(String(decoding: frame, as: UTF8.self))
            return seen.count != 1 && seen.count != 3
        }
        try Array("a\0b\0c\0d".utf8).withUnsafeBytes { try reader.consume($0, take) }
        #expect(seen == ["a"])
        #expect(reader.hasBacklog)
        try reader.consumeBacklog(take)
        #expect(seen == ["a", "b", "c"])
        // New bytes queue behind the held ones, and the unfinished "d" joins its end.
        try Array("e\0f\0".utf8).withUnsafeBytes { try reader.consume($0, take) }
        #expect(seen == ["a", "b", "c", "de", "f"])
        #expect(!reader.hasBacklog)
        #expect(reader.bufferedByteCount == 0)
    }
}
