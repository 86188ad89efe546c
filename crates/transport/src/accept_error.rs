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
    if crate::sys::is_resource_exhaustion(e) {
        AcceptFailure::BackOff
    } else if crate::sys::is_per_connection_accept_error(e) {
        AcceptFailure::Skip
    } else {
        AcceptFailure::Fatal
    }
}

/// Out of descriptors (the reserve descriptor can help).
pub(crate) fn is_fd_exhaustion(e: &io::Error) -> bool {
    crate::sys::is_fd_exhaustion(e)
}
