// The memory-map parser, on `/proc/PID/maps` of a child's process: the
// kernel writes the lines, but a mapped file's path is any name the child
// chose (spaces, newlines, `(deleted)` and all). The inspector reads at most
// MemoryMap.limit bytes; the same here.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - only lines with `x` in their permissions give a mapping, at most one per line;
// - a range is the line's first field: no space and no line feed in it;
// - a line that may not run code, appended, changes nothing;
// - more than MemoryMap.limit bytes is refused, never read in part.

import ChildInspection

@c(LLVMFuzzerTestOneInput)
public func fuzzMemoryMap(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { raw in
        let input = Array(raw)
        let lines = input.split(separator: 0x0A).count
        let mappings = withinHeapBound(8 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            try? MemoryMap.executableMappings(input)
        }
        guard let mappings else {
            require(false, "\(input.count) bytes, within the limit, were refused")
            return
        }
        require(mappings.count <= lines, "\(mappings.count) mappings from \(lines) lines")
        for mapping in mappings {
            require(!mapping.range.isEmpty && !mapping.range.utf8.contains(0x20) && !mapping.range.utf8.contains(0x0A),
                    "the range \(mapping.range.debugDescription)")
        }
        let separated = input.last == 0x0A || input.isEmpty ? input : input + [0x0A]
        let appended = separated + Array("7f00-7f01 r--p 00000000 fd:01 42 /usr/lib/data\n".utf8)
        require((try? MemoryMap.executableMappings(appended)) == mappings, "a line that may not run code changed the mappings")
        if input.isEmpty {
            let huge = [UInt8](repeating: 0x20, count: MemoryMap.limit + 1)
            require((try? MemoryMap.executableMappings(huge)) == nil, "more than the limit was read")
        }
    }
    return 0
}
