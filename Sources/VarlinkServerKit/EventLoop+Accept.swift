#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension EventLoop {
    /// Accepts what is queued, up to a batch, so a flood of connects cannot
    /// starve the clients already connected.
    func acceptConnections() {
        for _ in 0..<64 {
            let socket: FileDescriptor
            do {
                guard let accepted = try Socket.accept(listener.rawValue) else { return }
                socket = accepted
            } catch {
                if error.rawValue == EMFILE || error.rawValue == ENFILE {
                    shedOneConnection(error)
                } else {
                    logger.error("accept failed: \(error)")
                }
                return
            }
            let limit = core.configuration.maximumConnections
            if core.connectionCount.load(ordering: .relaxed) >= limit {
                if !atConnectionLimit {
                    atConnectionLimit = true
                    logger.warning("at the limit of \(limit) connections; refusing new ones")
                }
                continue  // Releasing `socket` closes it: the client sees a hang-up at once.
            }
            atConnectionLimit = false
            admit(socket)
        }
    }

    private func admit(_ socket: FileDescriptor) {
        let credentials: PeerCredentials
        do {
            credentials = try Socket.peerCredentials(of: socket.rawValue)
        } catch {
            logger.error("cannot read peer credentials, refusing connection: \(error)")
            return
        }
        guard admitsAnother(from: credentials) else { return }  // Releasing `socket` closes it.
        var pidfd: FileDescriptor?
        do {
            pidfd = try Socket.peerPIDFD(of: socket.rawValue)
        } catch {
            logger.warning("cannot pin peer \(credentials) with a pidfd: \(error)")
        }
        if pidfd == nil, !loggedMissingPIDFD {
            loggedMissingPIDFD = true
            logger.notice("SO_PEERPIDFD unavailable (kernel before 6.5?): peers are identified by pid only")
        }
        let token = nextToken
        nextToken += 1
        let peer = VarlinkPeer(credentials: credentials, pidfd: pidfd)
        let connection = VarlinkConnection(id: token, peer: peer, descriptor: socket.rawValue, core: core)
        do {
            try core.epoll.add(socket.rawValue, events: [.readable, .readHangUp], data: token)
        } catch {
            logger.error("cannot watch connection from \(credentials): \(error)")
            return
        }
        let reader = FrameReader(maximumFrameSize: core.configuration.maximumFrameSize,
                                 wipesConsumedBytes: !core.configuration.secretParameters.isEmpty)
        channels[token] = Channel(socket: socket, reader: reader, connection: connection)
        core.connectionCount.add(1, ordering: .relaxed)
        connectionsByUser[credentials.uid, default: 0] += 1
    }

    /// Whether the user behind `credentials` is under the per-user limit.
    private func admitsAnother(from credentials: PeerCredentials) -> Bool {
        let uid = credentials.uid
        guard let limit = core.configuration.maximumConnectionsPerUser,
              !core.configuration.usersWithoutConnectionLimit.contains(uid) else { return true }
        guard connectionsByUser[uid, default: 0] >= limit else {
            usersAtLimit.remove(uid)
            return true
        }
        if usersAtLimit.insert(uid).inserted {
            logger.warning("uid \(uid) holds \(limit) connections, its limit; refusing more from it (pid \(credentials.pid))")
        }
        return false
    }

    /// Forgets a closed connection of `uid` for the per-user limit.
    func forgetConnection(of uid: UInt32) {
        guard let count = connectionsByUser[uid] else { return }
        connectionsByUser[uid] = count > 1 ? count - 1 : nil
    }

    /// With the descriptor table full, accept one waiting client and close it at
    /// once using the spare descriptor, so it fails fast rather than hanging
    /// and the listener stops reporting readiness in a busy loop.
    private func shedOneConnection(_ error: Errno) {
        logger.error("out of file descriptors (\(error)); refusing a connection")
        spareDescriptor?.close()
        spareDescriptor = nil
        _ = try? Socket.accept(listener.rawValue)
        spareDescriptor = try? FileDescriptor.open("/dev/null", O_RDONLY)
    }
}
