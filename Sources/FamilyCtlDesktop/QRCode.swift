internal import CQRencode
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A QR code made by libqrencode (`QRcode_encodeString`, error correction
/// level M, the smallest version that holds the text), and its drawing for a
/// terminal: what `familyctl code enroll` shows an authenticator app.
package struct QRCode: Sendable {
    /// Modules per side, without the quiet zone.
    package let width: Int
    /// Row by row, `true` for a dark module.
    package let modules: [[Bool]]

    /// Encodes `text`, whose bytes are copied into libqrencode and zeroed
    /// there when the symbol is freed; nil when it does not fit a QR code.
    package init?(_ text: SecretBytes) {
        var bytes = text.withUnsafeBytes { Array($0) } + [0]
        defer { bytes.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        let symbol = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { QRcode_encodeString($0.baseAddress, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }
        }
        guard let symbol else { return nil }
        defer {
            SecretBytes.zero(UnsafeMutableRawBufferPointer(start: symbol.pointee.data,
                                                           count: Int(symbol.pointee.width * symbol.pointee.width)))
            QRcode_free(symbol)
        }
        let width = Int(symbol.pointee.width)
        // Bit 0 of each byte is the module's colour (qrencode.h).
        modules = (0..<width).map { row in (0..<width).map { column in symbol.pointee.data[row * width + column] & 1 == 1 } }
        self.width = width
    }

    /// The symbol drawn with block characters, two rows of modules per line
    /// and `margin` light modules around it (4, the quiet zone a reader
    /// needs), as `qrencode -t ANSIUTF8` draws it: every line sets both
    /// colours, light modules white on black, so the code scans whatever
    /// the terminal's own background and foreground are.
    package func terminalText(margin: Int = 4) -> String {
        let side = width + 2 * margin
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - margin, column - margin)
            guard r >= 0, r < width, c >= 0, c < width else { return false }
            return modules[r][c]
        }
        var text = ""
        for row in stride(from: 0, to: side, by: 2) {
            text += "\u{1B}[40;37;1m"
            for column in 0..<side {
                let top = dark(row, column)
                let bottom = row + 1 < side && dark(row + 1, column)
                let block = switch (top, bottom) {
                case (false, false): "\u{2588}"
                case (false, true): "\u{2580}"
                case (true, false): "\u{2584}"
                case (true, true): " "
                }
                text += block
            }
            text += "\u{1B}[0m\n"
        }
        return text
    }
}
