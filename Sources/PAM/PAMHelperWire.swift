import SystemKit

/// The messages between the Guard and its PAM helper, one per packet of a
/// `SOCK_SEQPACKET` pair: a kind byte, then the kind's body. Like polkit's
/// agent helper protocol, but in bytes, so an answer is never a `String`.
///
/// Guard to helper: ``request`` (once, first), then for each of the helper's
/// messages ``answer`` (the reply's bytes, raw), ``noAnswer`` or ``ended``.
/// Helper to Guard: ``message`` (style byte, text) any number of times, then
/// ``result`` (once, last).
///
/// A body of fields is a sequence of optional strings: a presence byte (0 or
/// 1), then for a present field a 2-byte big-endian length and its bytes.
package enum PAMHelperWire {
    /// The longest message either side sends or accepts.
    package static let maximumMessage = 64 * 1024

    package static let request: UInt8 = 0x51  // Q: service, user, ruser?, tty?, pam.d folder?, prompt timeout (ms)
    package static let answer: UInt8 = 0x41  // A: the reply's bytes
    package static let noAnswer: UInt8 = 0x4E  // N: for an info or error message
    package static let ended: UInt8 = 0x45  // E: one byte, ``endCanceled`` or ``endTimedOut``
    package static let message: UInt8 = 0x4D  // M: one style byte, then the text
    package static let result: UInt8 = 0x52  // R: reason? (none: success), code?, detail?

    package static let endCanceled: UInt8 = 0
    package static let endTimedOut: UInt8 = 1

    /// Why bytes from the other side are not a message of the protocol.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    // MARK: Styles

    package static func style(of message: PAMMessage) -> UInt8 {
        switch message {
        case .secretPrompt: 0
        case .textPrompt: 1
        case .info: 2
        case .error: 3
        }
    }

    package static func message(style: UInt8, text: String) throws(Malformed) -> PAMMessage {
        switch style {
        case 0: return .secretPrompt(text)
        case 1: return .textPrompt(text)
        case 2: return .info(text)
        case 3: return .error(text)
        default: throw Malformed("unknown message style \(style)")
        }
    }

    // MARK: Fields

    package static func encode(kind: UInt8, fields: [String?]) -> [UInt8] {
        var bytes = [kind]
        for field in fields {
            guard let field else { bytes.append(0); continue }
            let utf8 = Array(field.utf8.prefix(Int(UInt16.max)))
            bytes.append(1)
            bytes.append(UInt8(utf8.count >> 8))
            bytes.append(UInt8(utf8.count & 0xFF))
            bytes += utf8
        }
        return bytes
    }

    /// The `count` fields of `body`, which must hold exactly those.
    package static func decode(fields count: Int, from body: ArraySlice<UInt8>) throws(Malformed) -> [String?] {
        var fields: [String?] = []
        var index = body.startIndex
        for _ in 0..<count {
            guard index < body.endIndex else { throw Malformed("a message with \(fields.count) of \(count) fields") }
            let present = body[index]
            index += 1
            guard present == 1 else {
                guard present == 0 else { throw Malformed("a field with presence byte \(present)") }
                fields.append(nil)
                continue
            }
            guard body.endIndex - index >= 2 else { throw Malformed("a field cut short") }
            let length = Int(body[index]) << 8 | Int(body[index + 1])
            index += 2
            guard body.endIndex - index >= length else { throw Malformed("a field cut short") }
            let text = body[index..<index + length]
            guard let string = String(validating: text, as: UTF8.self) else { throw Malformed("a field that is not UTF-8") }
            fields.append(string)
            index += length
        }
        guard index == body.endIndex else { throw Malformed("\(body.endIndex - index) bytes after the last field") }
        return fields
    }

    // MARK: Request and result

    package static func encode(_ request: PAMRequest) -> [UInt8] {
        let (seconds, attoseconds) = request.promptTimeout.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return encode(kind: Self.request, fields: [request.service, request.user, request.requestingUser, request.tty,
                                                   request.configurationDirectory, String(milliseconds)])
    }

    package static func decodeRequest(_ body: ArraySlice<UInt8>) throws(Malformed) -> PAMRequest {
        let fields = try decode(fields: 6, from: body)
        guard let service = fields[0], let user = fields[1], let timeout = fields[5].flatMap({ Int64($0) }), timeout > 0 else {
            throw Malformed("a request without a service, a user or a prompt timeout")
        }
        return PAMRequest(service: service, user: user, requestingUser: fields[2], tty: fields[3],
                          configurationDirectory: fields[4], promptTimeout: .milliseconds(timeout))
    }

    /// nil: PAM succeeded.
    package static func encode(_ error: PAMError?) -> [UInt8] {
        encode(kind: result, fields: [error?.reason.rawValue, error?.code.map { String($0.rawValue) }, error?.detail])
    }

    package static func decodeResult(_ body: ArraySlice<UInt8>, for request: PAMRequest) throws(Malformed) -> PAMError? {
        let fields = try decode(fields: 3, from: body)
        guard let name = fields[0] else { return nil }
        guard let reason = PAMError.Reason(rawValue: name) else { throw Malformed("an unknown result \(name.debugDescription)") }
        var code: PAMResultCode?
        if let text = fields[1] {
            guard let value = CInt(text) else { throw Malformed("a result code \(text.debugDescription)") }
            code = PAMResultCode(rawValue: value)
        }
        var error = PAMError(reason, service: request.service, user: request.user, code: code)
        error.detail = fields[2]
        return error
    }
}
