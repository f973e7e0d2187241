extension Errno {
    /// Every named value with its symbolic name. `EWOULDBLOCK` and, on
    /// Linux, `EOPNOTSUPP` share their numbers with `EAGAIN` and `ENOTSUP`,
    /// so the first entry for a number is the name printed.
    package static let named: [(errno: Errno, name: String)] = [
        (.notPermitted, "EPERM"), (.noSuchFile, "ENOENT"), (.interrupted, "EINTR"), (.ioError, "EIO"),
        (.badDescriptor, "EBADF"), (.wouldBlock, "EAGAIN"), (.noMemory, "ENOMEM"), (.accessDenied, "EACCES"),
        (.fileExists, "EEXIST"), (.notDirectory, "ENOTDIR"), (.isDirectory, "EISDIR"), (.invalidArgument, "EINVAL"),
        (.systemFileLimit, "ENFILE"), (.processFileLimit, "EMFILE"), (.fileTooLarge, "EFBIG"), (.noSpace, "ENOSPC"),
        (.readOnlyFileSystem, "EROFS"), (.brokenPipe, "EPIPE"), (.notSupported, "ENOTSUP"),
        (.operationNotSupported, "EOPNOTSUPP"), (.notTypewriter, "ENOTTY"), (.addressInUse, "EADDRINUSE"),
        (.addressNotAvailable, "EADDRNOTAVAIL"), (.connectionAborted, "ECONNABORTED"),
        (.connectionReset, "ECONNRESET"), (.connectionRefused, "ECONNREFUSED"), (.timedOut, "ETIMEDOUT"),
        (.alreadyInProgress, "EALREADY"), (.protocolError, "EPROTO"), (.quotaExceeded, "EDQUOT"),
        (.directoryNotEmpty, "ENOTEMPTY"), (.notImplemented, "ENOSYS"),
    ]

    /// The symbolic name (`EAGAIN`), or `nil` for a number not in ``named``.
    package var name: String? { Self.named.first { $0.errno == self }?.name }

    /// The value with symbolic name `name` (`"EAGAIN"`, also `"EWOULDBLOCK"`),
    /// or `nil` for a name not in ``named``.
    package init?(name: String) {
        let wanted = name == "EWOULDBLOCK" ? "EAGAIN" : name
        guard let entry = Self.named.first(where: { $0.name == wanted }) else { return nil }
        self = entry.errno
    }
}
