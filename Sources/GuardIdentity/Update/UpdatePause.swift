import Glibc
import SystemKit

/// Pause points for tests that kill the Guard, or race it, in the middle of
/// an update: `FAMILYCONTROLSD_TEST_UPDATE_PAUSE=STEP` (or `STEP:SECONDS`)
/// makes a debug build of the Guard log "update: paused at STEP" and wait 30
/// seconds (or SECONDS) there. Release builds (what is installed) have no
/// pause points and read no such variable.
package enum UpdatePause {
    package static func at(_ step: String, logger: Logger) {
        #if DEBUG
        guard let wanted = getenv("FAMILYCONTROLSD_TEST_UPDATE_PAUSE") else { return }
        let setting = String(cString: wanted).split(separator: ":", maxSplits: 1)
        guard setting.first.map(String.init) == step else { return }
        let seconds = setting.count == 2 ? Int(setting[1]) ?? 30 : 30
        logger.notice("update: paused at \(step)")
        var pause = timespec(tv_sec: seconds, tv_nsec: 0)
        var left = timespec()
        while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        #endif
    }
}
