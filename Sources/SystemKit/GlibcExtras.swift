#if canImport(Glibc)
import Glibc
#endif

/// C entry points that glibc exports but the Swift `Glibc` module leaves out:
/// `<sys/epoll.h>`, `<sys/eventfd.h>` and `<sys/vfs.h>` (`fstatfs`) are not in
/// its module map, and `accept4`, `pthread_setname_np`, `statx`, `getdents64`
/// and the pidfd calls are declared only under `_GNU_SOURCE`; `prctl` is
/// variadic, which Swift does not import.
///
/// They are looked up once with `dlsym(3)` and called through C function
/// pointers, so the calling convention is C's. A missing symbol (a libc without
/// it) surfaces as `ENOSYS` from the wrapper that needs it, never as a trap.
enum GlibcExtras {
    typealias Accept4 = @convention(c) (
        CInt, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, CInt
    ) -> CInt
    typealias EpollCreate1 = @convention(c) (CInt) -> CInt
    typealias EpollControl = @convention(c) (CInt, CInt, CInt, UnsafeMutableRawPointer?) -> CInt
    typealias EpollWait = @convention(c) (CInt, UnsafeMutableRawPointer?, CInt, CInt) -> CInt
    typealias EventFD = @convention(c) (CUnsignedInt, CInt) -> CInt
    typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>?) -> CInt
    typealias Statx = @convention(c) (
        CInt, UnsafePointer<CChar>, CInt, CUnsignedInt, UnsafeMutableRawPointer
    ) -> CInt
    typealias Getdents64 = @convention(c) (CInt, UnsafeMutableRawPointer, Int) -> Int
    typealias Fstatfs = @convention(c) (CInt, UnsafeMutableRawPointer) -> CInt
    typealias PidfdSendSignal = @convention(c) (CInt, CInt, UnsafeMutableRawPointer?, CUnsignedInt) -> CInt
    typealias PidfdOpen = @convention(c) (pid_t, CUnsignedInt) -> CInt
    /// `prctl(2)` with its four optional arguments always given: on Linux's
    /// x86-64 and AArch64 calling conventions, integer arguments of a variadic
    /// call travel exactly as they do for this fixed signature.
    typealias Prctl = @convention(c) (CInt, CUnsignedLong, CUnsignedLong, CUnsignedLong, CUnsignedLong) -> CInt

    static let accept4 = resolve("accept4", as: Accept4.self)
    static let epollCreate1 = resolve("epoll_create1", as: EpollCreate1.self)
    static let epollControl = resolve("epoll_ctl", as: EpollControl.self)
    static let epollWait = resolve("epoll_wait", as: EpollWait.self)
    static let eventFD = resolve("eventfd", as: EventFD.self)
    static let setThreadName = resolve("pthread_setname_np", as: SetThreadName.self)
    /// glibc 2.28.
    static let statx = resolve("statx", as: Statx.self)
    /// glibc 2.30.
    static let getdents64 = resolve("getdents64", as: Getdents64.self)
    static let fstatfs = resolve("fstatfs", as: Fstatfs.self)
    /// glibc 2.36.
    static let pidfdSendSignal = resolve("pidfd_send_signal", as: PidfdSendSignal.self)
    static let pidfdOpen = resolve("pidfd_open", as: PidfdOpen.self)
    static let prctl = resolve("prctl", as: Prctl.self)

    private static func resolve<Function>(_ name: String, as type: Function.Type) -> Function? {
        // A null handle is glibc's RTLD_DEFAULT: search the objects already loaded.
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
