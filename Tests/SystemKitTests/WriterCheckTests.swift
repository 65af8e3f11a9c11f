#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Writers, asked of the kernel with a read lease")
struct WriterCheckTests {
    @Test func aFileNobodyHasOpenForWritingHasNoWriters() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file")
            let reader = try FileDescriptor.open(path + "/file", O_RDONLY)
            let other = try FileDescriptor.open(path + "/file", O_RDONLY)
            #expect(reader.writers(releasingLease: true) == .none)
            #expect(other.writers(releasingLease: true) == .none)
        }
    }

    @Test func aDescriptorOpenForWritingIsAWriterUntilItCloses() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file")
            let writer = try FileDescriptor.open(path + "/file", O_WRONLY)
            let reader = try FileDescriptor.open(path + "/file", O_RDONLY)
            #expect(reader.writers(releasingLease: true) == .present)
            writer.close()
            // A process another test starts at this moment holds a copy of the descriptor
            // until its exec closes it: the writer is gone once that copy is.
            #expect(eventuallyNone(reader), "the closed writer is still seen")
        }
    }

    private func eventuallyNone(_ reader: FileDescriptor) -> Bool {
        for _ in 0..<100 {
            if reader.writers(releasingLease: true) == .none { return true }
            usleep(50_000)
        }
        return false
    }

    @Test func anotherProcessHoldingTheFileOpenForWritingIsAWriter() throws {
        try withScratchDirectory { path in
            try makeFile(path + "/file")
            let input = try makePipe()
            let started = try makePipe()
            // The shell opens the file for appending, says so, and holds it until its input ends.
            let child = try ChildProcess(
                ["/bin/sh", "-c", "exec 3>>\"$0\"; echo >&4; read line; exit 0", path + "/file"],
                descriptors: [0: input.read.rawValue, 4: started.write.rawValue]
            )
            input.read.close()
            started.write.close()
            var byte: UInt8 = 0
            #expect(try withUnsafeMutableBytes(of: &byte) { try started.read.read(into: $0) } == 1)

            let reader = try FileDescriptor.open(path + "/file", O_RDONLY)
            #expect(reader.writers(releasingLease: true) == .present)
            input.write.close()
            #expect(try child.waitForExit() == 0)
            #expect(reader.writers(releasingLease: true) == .none)
        }
    }

    @Test func aDirectoryCannotBeLeasedSoTheAnswerIsUnknown() throws {
        try withScratchDirectory { path in
            let directory = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
            #expect(directory.writers() == .unknown(Errno(EINVAL)))
        }
    }
}
