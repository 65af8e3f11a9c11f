// The Varlink frame reader and the call and reply decoders, as the Guard runs
// them on a connection's bytes.
//
// The first input byte picks the frame limit and whether consumed bytes are
// wiped; the second seeds the chunk sizes the stream arrives in and the
// frames after which the caller asks the reader to stop. The rest is the stream.
//
// Properties, for every input:
// - however the stream is cut and paused, the frames served are the stream's
//   NUL-separated pieces, in order, up to the first piece longer than the
//   limit, which is refused (`frameTooLarge`) as soon as it is seen;
// - the reader never holds more than the limit of an unfinished frame, and
//   its heap stays within a small multiple of limit and stream;
// - a frame that decodes as a call (or a reply) encodes to one frame that
//   decodes to the same call (reply); a call with secret parameters is the
//   same call with the secrets as plain strings;
// - a frame that does not decode fails with a VarlinkMessageError whose
//   description is one short line.
import SystemKit
import Varlink

private let secretParameters: Set<String> = ["response"]
private let limits = [1, 7, 64, 256, 4096, FrameReader.defaultMaximumFrameSize]

@c(LLVMFuzzerTestOneInput)
public func fuzzVarlinkCall(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { input in
        guard input.count >= 2 else { return }
        let limit = limits[Int(input[0] & 0x7F) % limits.count]
        let wipes = input[0] & 0x80 != 0
        var choices = Choices(seed: [input[1]])
        let stream = UnsafeRawBufferPointer(rebasing: input[2...])

        var served = Served(capacity: stream.count)
        withinHeapBound(4 * (limit + stream.count) + (64 << 10), "framing \(stream.count) bytes") {
            feed(stream, limit: limit, wipes: wipes, choices: &choices, into: &served)
        }
        let frames = served.frames
        checkFraming(served, frames, of: stream, limit: limit)
        for frame in frames.prefix(64) {
            frame.withUnsafeBytes { checkCall($0); checkReply($0) }
        }
    }
    return 0
}

/// What the reader served, kept in storage sized in advance so that keeping
/// it allocates nothing while the reader's heap is measured.
private struct Served {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    var error: FrameReaderError?
    /// Bytes of an unfinished frame the reader held when the stream ended.
    var buffered = 0

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
        ends.reserveCapacity(capacity + 1)
    }

    mutating func append(_ frame: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: frame)
        ends.append(bytes.count)
    }

    var frames: [[UInt8]] {
        zip([0] + ends.dropLast(), ends).map { Array(bytes[$0..<$1]) }
    }
}

/// Feeds `stream` to a reader in chunks, stopping after some frames and
/// resuming from the backlog, as the event loop does for a busy connection.
private func feed(
    _ stream: UnsafeRawBufferPointer, limit: Int, wipes: Bool, choices: inout Choices, into served: inout Served
) {
    var reader = FrameReader(maximumFrameSize: limit, wipesConsumedBytes: wipes)
    var offset = 0
    func body(_ frame: UnsafeRawBufferPointer) -> Bool {
        served.append(frame)
        return !choices.oneIn(4)
    }
    do throws(FrameReaderError) {
        while offset < stream.count {
            let length = min(choices.next(in: 1...64), stream.count - offset)
            try reader.consume(UnsafeRawBufferPointer(rebasing: stream[offset..<offset + length]), body)
            offset += length
            require(reader.bufferedByteCount <= limit, "holds \(reader.bufferedByteCount) bytes over a limit of \(limit)")
            if choices.oneIn(2) {
                while reader.hasBacklog { try reader.consumeBacklog(body) }
            }
        }
        while reader.hasBacklog { try reader.consumeBacklog(body) }
        require(reader.bufferedByteCount <= limit, "holds \(reader.bufferedByteCount) bytes over a limit of \(limit)")
        served.buffered = reader.bufferedByteCount
    } catch {
        served.error = error
    }
}

/// Compares what the reader served with the stream split at each NUL.
private func checkFraming(_ served: Served, _ frames: [[UInt8]], of stream: UnsafeRawBufferPointer, limit: Int) {
    let pieces = stream.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    // The last piece has no NUL after it: an unfinished frame.
    let complete = pieces.dropLast()
    let unfinished = pieces.last ?? []
    if let tooLong = complete.firstIndex(where: { $0.count > limit }) {
        require(served.error == .frameTooLarge(limit: limit), "a frame of \(complete[tooLong].count) bytes passed a limit of \(limit)")
        require(frames == Array(complete[..<tooLong]), "frames before the refused one were not served as sent")
    } else if unfinished.count > limit {
        require(served.error == .frameTooLarge(limit: limit), "\(unfinished.count) bytes without a NUL held over a limit of \(limit)")
        require(frames == Array(complete), "frames before the refused one were not served as sent")
    } else {
        require(served.error == nil, "refused a stream whose frames fit: \(String(describing: served.error))")
        require(frames == Array(complete), "frames were not served as sent")
        require(served.buffered == unfinished.count, "holds \(served.buffered) bytes of an unfinished frame of \(unfinished.count)")
    }
}

private func checkCall(_ frame: UnsafeRawBufferPointer) {
    let plain = Result { () throws(VarlinkMessageError) in try VarlinkCall(parsing: frame) }
    let withSecrets = Result { () throws(VarlinkMessageError) in
        try VarlinkCall(parsing: frame, secretParameters: secretParameters)
    }
    switch (plain, withSecrets) {
    case (.failure(let error), .failure(let secretError)):
        require(isOneShortLine(error.description), "the error is not one short line: \(error.description.utf8.count) bytes")
        require(isOneShortLine(secretError.description), "the error is not one short line: \(secretError.description.utf8.count) bytes")
    case (.success(let call), .success(let secretCall)):
        require(VarlinkName.split(qualified: call.method) != nil, "accepted method \(call.method)")
        require(!(call.oneway && call.more), "accepted oneway with more")
        require("\(call.interface).\(call.memberName)" == call.method, "interface and member do not make up \(call.method)")
        require(revealed(secretCall) == call, "secret parameters changed the call")
        checkEncoding(call, secretParameters: [])
        checkEncoding(secretCall, secretParameters: secretParameters)
    case (.success, .failure(let error)), (.failure(let error), .success):
        require(false, "secret parameters changed whether the frame decodes: \(error)")
    }
}

private func checkEncoding(_ call: VarlinkCall, secretParameters: Set<String>) {
    let encoded = call.encoded()
    require(encoded.last == 0 && !encoded.dropLast().contains(0), "an encoded call is not one frame")
    let again = encoded.dropLast().withUnsafeBytes { frame in
        Result { () throws(VarlinkMessageError) in try VarlinkCall(parsing: frame, secretParameters: secretParameters) }
    }
    guard case .success(let decoded) = again else { return require(false, "an encoded call does not decode: \(again)") }
    require(decoded == call, "\(call.jsonValue) came back as \(decoded.jsonValue)")
    require(decoded.carriesSecret == call.carriesSecret, "a call's secrets changed on the wire")
}

private func checkReply(_ frame: UnsafeRawBufferPointer) {
    switch Result(catching: { () throws(VarlinkMessageError) in try VarlinkReply(parsing: frame) }) {
    case .failure(let error):
        require(isOneShortLine(error.description), "the error is not one short line: \(error.description.utf8.count) bytes")
    case .success(let reply):
        if let name = reply.error { require(VarlinkName.split(qualified: name) != nil, "accepted error name \(name)") }
        let encoded = reply.encoded()
        require(encoded.last == 0 && !encoded.dropLast().contains(0), "an encoded reply is not one frame")
        let again = encoded.dropLast().withUnsafeBytes { frame in
            Result { () throws(VarlinkMessageError) in try VarlinkReply(parsing: frame) }
        }
        require(again == .success(reply), "a reply came back as \(again)")
    }
}

/// `call` with each secret parameter made the string it was written as.
private func revealed(_ call: VarlinkCall) -> VarlinkCall {
    var call = call
    guard case .object(let parameters) = reveal(.object(call.parameters)) else { return call }
    call.parameters = parameters
    return call
}

private func reveal(_ value: JSONValue) -> JSONValue {
    switch value {
    case .secret(let secret): .string(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
    case .array(let elements): .array(elements.map(reveal))
    case .object(let object): .object(JSONObject(object.members.map { (key: $0.key, value: reveal($0.value)) }))
    default: value
    }
}
