#if canImport(Glibc)
import Glibc
#endif

/// glibc entry points that the Glibc module does not import, because glibc
/// declares them only under `_GNU_SOURCE` (`statx`, `getdents64`) or in a
/// header the module leaves out (`fstatfs`).
///
/// They are looked up once by name and called through their exact C
/// prototypes; each is nil when the C library lacks it.
enum LinuxFunctions {
    typealias Statx = @convention(c) (
        CInt, UnsafePointer<CChar>, CInt, CUnsignedInt, UnsafeMutableRawPointer
    ) -> CInt
    typealias Getdents64 = @convention(c) (CInt, UnsafeMutableRawPointer, Int) -> Int
    typealias Fstatfs = @convention(c) (CInt, UnsafeMutableRawPointer) -> CInt

    /// `int statx(int, const char *, int, unsigned int, struct statx *)`, glibc 2.28.
    static let statx: Statx? = lookUp("statx", as: Statx.self)
    /// `ssize_t getdents64(int, void *, size_t)`, glibc 2.30.
    static let getdents64: Getdents64? = lookUp("getdents64", as: Getdents64.self)
    /// `int fstatfs(int, struct statfs *)`.
    static let fstatfs: Fstatfs? = lookUp("fstatfs", as: Fstatfs.self)

    private static func lookUp<Function>(_ name: String, as type: Function.Type) -> Function? {
        // A nil handle is RTLD_DEFAULT: the global symbol scope, where libc lives.
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
