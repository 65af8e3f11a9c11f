/// Lets one test at a time point ``AuthorizationCenter/shared`` at an
/// in-memory Guard; the others wait their turn, in order.
actor SharedCenterLock {
    static let shared = SharedCenterLock()

    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
