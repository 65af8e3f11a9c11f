/// RFC 6238 one-time codes, written from the RFCs for the tests: what a
/// guardian's authenticator app computes from the secret `familyctl code
/// enroll` shows. SHA-1 (FIPS 180-4), HMAC (RFC 2104), HOTP's dynamic
/// truncation (RFC 4226) over the 30-second step (RFC 6238), base32 (RFC 4648).
public enum OneTimeCode {
    /// The code for Unix time `time`: `digits` digits of HOTP at step `time / period`.
    public static func totp(secret: [UInt8], time: UInt64, period: UInt64 = 30, digits: Int = 6) -> String {
        hotp(secret: secret, counter: time / period, digits: digits)
    }

    /// The code for `counter` (RFC 4226).
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int = 6) -> String {
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        let mac = hmacSHA1(key: secret, message: message)
        let offset = Int(mac[19] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// RFC 4648 base32 (case and padding ignored); nil for any other character.
    public static func base32Decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var buffer: UInt32 = 0
        var bits = 0
        var bytes: [UInt8] = []
        for character in text.uppercased() where character != "=" && character != " " {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits - 8)))
                bits -= 8
            }
        }
        return bytes
    }

    public static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var key = key.count > 64 ? sha1(key) : key
        key += [UInt8](repeating: 0, count: 64 - key.count)
        let inner = sha1(key.map { $0 ^ 0x36 } + message)
        return sha1(key.map { $0 ^ 0x5c } + inner)
    }

    public static func sha1(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let length = UInt64(message.count) * 8
        padded += (0..<8).map { UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64($0))) }
        func rotate(_ value: UInt32, _ by: UInt32) -> UInt32 { (value << by) | (value >> (32 - by)) }
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            var w = (0..<16).map { index in
                (0..<4).reduce(UInt32(0)) { ($0 << 8) | UInt32(padded[chunk + 4 * index + $1]) }
            }
            for index in 16..<80 { w.append(rotate(w[index - 3] ^ w[index - 8] ^ w[index - 14] ^ w[index - 16], 1)) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for index in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch index {
                case 0..<20: ((b & c) | (~b & d), 0x5A827999)
                case 20..<40: (b ^ c ^ d, 0x6ED9EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                default: (b ^ c ^ d, 0xCA62C1D6)
                }
                let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[index]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
            }
            h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d; h[4] = h[4] &+ e
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }
}
