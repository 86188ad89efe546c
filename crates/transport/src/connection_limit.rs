//! A server channel's count of open accepted connections (the `max_connections` option):
//! every accepted socket carries a [`ConnectionPermit`] until the channel made of it closes,
//! or until it is dropped without becoming a channel, so the count stays right whichever loop
//! or thread the connection lives on.
//!
//! Ground rules: permits are taken on the server's loop thread only (one taker, so a check
//! then an add cannot overshoot); they are returned from any thread (an atomic decrement).

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One open connection counted against its server's limit; dropping it frees the place.
pub struct ConnectionPermit {
    live: Arc<AtomicUsize>,
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::AcqRel);
    }
}

impl fmt::Debug for ConnectionPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ConnectionPermit(open: {})",
            self.live.load(Ordering::Acquire)
        )
    }
}

/// The open connections of one server channel.
#[derive(Default)]
pub(crate) struct ConnectionCount {
    live: Arc<AtomicUsize>,
}

impl ConnectionCount {
    /// A permit for one more connection, unless `max` are open already (`max == 0`: no
    /// limit).
    pub fn try_acquire(&self, max: usize) -> Option<ConnectionPermit> {
        if max != 0 && self.live.load(Ordering::Acquire) >= max {
            return None;
        }
        self.live.fetch_add(1, Ordering::AcqRel);
        Some(ConnectionPermit {
            live: self.live.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }
}
