//! How a server channel treats an `accept` error (see `server_channel`): skip it, back off,
//! or give up on the listener.

use std::io;

pub(crate) enum AcceptFailure {
    Skip,
    BackOff,
    Fatal,
}

pub(crate) fn classify(e: &io::Error) -> AcceptFailure {
    if matches!(
        e.kind(),
        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
    ) {
        return AcceptFailure::Skip;
    }
    match e.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => AcceptFailure::BackOff,
        Some(
            libc::EPROTO
            | libc::EPERM
            | libc::ENETDOWN
            | libc::ENOPROTOOPT
            | libc::EHOSTDOWN
            | libc::ENONET
            | libc::EHOSTUNREACH
            | libc::ENETUNREACH
            | libc::ETIMEDOUT,
        ) => AcceptFailure::Skip,
        _ => AcceptFailure::Fatal,
    }
}

/// Out of descriptors (the reserve descriptor can help).
pub(crate) fn is_fd_exhaustion(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}
