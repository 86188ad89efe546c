//! The operating system's error numbers, in one place: every `libc` constant the transport
//! reads lives here, behind named predicates, so the rest of the crate is platform-neutral.

use std::io;

fn errno(e: &io::Error) -> Option<i32> {
    e.raw_os_error()
}

/// The errno name of an OS error (`ECONNRESET`, ...), for the ones users meet.
pub(crate) fn errno_name(e: &io::Error) -> Option<&'static str> {
    Some(match errno(e)? {
        libc::EPIPE => "EPIPE",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNRESET => "ECONNRESET",
        libc::ECONNABORTED => "ECONNABORTED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::EACCES => "EACCES",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::ENOBUFS => "ENOBUFS",
        libc::ENOMEM => "ENOMEM",
        libc::EHOSTUNREACH => "EHOSTUNREACH",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ENOTCONN => "ENOTCONN",
        libc::EINVAL => "EINVAL",
        libc::EBADF => "EBADF",
        _ => return None,
    })
}

/// A non-blocking connect that has started but not finished.
pub(crate) fn is_connect_in_progress(e: &io::Error) -> bool {
    errno(e) == Some(libc::EINPROGRESS)
}

/// Out of descriptors, process-wide or system-wide.
pub(crate) fn is_fd_exhaustion(e: &io::Error) -> bool {
    matches!(errno(e), Some(libc::EMFILE | libc::ENFILE))
}

/// Out of descriptors or kernel memory: the next accept may succeed after a pause.
pub(crate) fn is_resource_exhaustion(e: &io::Error) -> bool {
    matches!(
        errno(e),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// An accept failure that concerns one pending connection only (Linux reports network errors
/// of the new socket through accept; see accept(2)).
pub(crate) fn is_per_connection_accept_error(e: &io::Error) -> bool {
    matches!(
        errno(e),
        Some(
            libc::EPROTO
                | libc::EPERM
                | libc::ENETDOWN
                | libc::ENOPROTOOPT
                | libc::EHOSTDOWN
                | libc::ENONET
                | libc::EHOSTUNREACH
                | libc::ENETUNREACH
                | libc::ETIMEDOUT
        )
    )
}
