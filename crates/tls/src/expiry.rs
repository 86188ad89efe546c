//! How long a server resumes a session: node:tls's `sessionTimeout` (300 s by default, as
//! node:tls and OpenSSL, under which Netty's OpenSSL engine runs, have it). rustls resumes a
//! session for as long as its keys open the ticket (up to 12 h with its own ticketer) and keeps
//! cached sessions until they are pushed out; here both end at the timeout.
//!
//! Ground rules:
//! - The issue time (Unix seconds) is sealed with the session, in a ticket or in the cache
//!   entry, and checked when the session comes back: a session older than the timeout (or
//!   issued more than [`SKEW_SECS`] in the future, a clock gone wrong between servers sharing
//!   `ticketKeys`) is not resumed; a full handshake follows, never an error.
//! - Key rolling still bounds what a stolen key opens (rustls's advice for forward secrecy):
//!   a context's own ticket keys are replaced every timeout and kept one more, so a key is
//!   erased at most two timeouts after it sealed its last ticket. `ticketKeys` do not roll by
//!   themselves (node:tls's rule): `reload` rotates them.
//! - The clock is a function so that tests can move it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rustls::server::{ProducesTickets, ServerSessionMemoryCache, StoresServerSessions};
use rustls::ticketer::TicketRotator;

use crate::context::{SslOptions, MAX_SESSION_TIMEOUT};
use crate::error::TlsError;
use crate::tickets::{random_ticketer, SharedTicketer};

/// A server context's resumption, from `o`: its session cache, and its ticketer (none when
/// it issues no tickets: rustls's default then stays).
#[allow(clippy::type_complexity)]
pub(crate) fn resumption(
    o: &SslOptions,
) -> Result<
    (
        Arc<dyn StoresServerSessions>,
        Option<Arc<dyn ProducesTickets>>,
    ),
    TlsError,
> {
    let timeout = session_timeout(o)?;
    let storage: Arc<dyn StoresServerSessions> = if o.session_cache_size > 0 {
        Arc::new(ExpiringStore::new(
            ServerSessionMemoryCache::new(o.session_cache_size),
            timeout,
            unix_now,
        ))
    } else {
        Arc::new(rustls::server::NoServerSessionStorage {})
    };
    let sealer: Arc<dyn ProducesTickets> = match (&o.ticket_keys, o.session_tickets) {
        (Some(keys), true) => Arc::new(SharedTicketer::new(keys)?),
        (Some(_), false) => {
            return Err(TlsError::Config(
                "ticketKeys with sessionTickets: false (the keys seal tickets)".into(),
            ))
        }
        // Own keys, replaced every timeout.
        (None, true) => Arc::new(
            TicketRotator::new(timeout, random_ticketer)
                .map_err(|e| TlsError::Config(format!("tickets: {e}")))?,
        ),
        (None, false) => return Ok((storage, None)),
    };
    let tickets = ExpiringTickets::new(sealer, timeout, unix_now);
    Ok((storage, Some(Arc::new(tickets))))
}

/// The session timeout in whole seconds, checked.
fn session_timeout(o: &SslOptions) -> Result<u32, TlsError> {
    let t = o.session_timeout;
    if t < Duration::from_secs(1) || t > MAX_SESSION_TIMEOUT {
        return Err(TlsError::Config(format!(
            "sessionTimeout must be 1 s to 7 days, not {} s",
            t.as_secs_f64()
        )));
    }
    Ok(t.as_secs() as u32)
}

/// Seconds an issue time may lie ahead of this server's clock.
pub(crate) const SKEW_SECS: u64 = 60;
/// The length of the sealed issue time.
const STAMP: usize = 8;

/// The clock: Unix seconds.
pub(crate) type Clock = fn() -> u64;

/// The system clock in Unix seconds.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `value` behind its issue time `now`.
fn stamp(now: u64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(STAMP + value.len());
    out.extend_from_slice(&now.to_be_bytes());
    out.extend_from_slice(value);
    out
}

/// The value of `stamped` if it is still fresh at `now`.
fn fresh(stamped: Vec<u8>, now: u64, timeout: u64) -> Option<Vec<u8>> {
    let issued = u64::from_be_bytes(stamped.get(..STAMP)?.try_into().ok()?);
    let young = now.saturating_add(SKEW_SECS) >= issued && now.saturating_sub(issued) <= timeout;
    young.then(|| stamped[STAMP..].to_vec())
}

/// Tickets that open for `timeout` seconds after they were issued.
pub(crate) struct ExpiringTickets {
    inner: Arc<dyn ProducesTickets>,
    timeout: u32,
    clock: Clock,
}

impl ExpiringTickets {
    pub(crate) fn new(inner: Arc<dyn ProducesTickets>, timeout: u32, clock: Clock) -> Self {
        ExpiringTickets {
            inner,
            timeout,
            clock,
        }
    }
}

impl ProducesTickets for ExpiringTickets {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    /// The hint clients get: they drop the ticket after it.
    fn lifetime(&self) -> u32 {
        self.timeout
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.inner.encrypt(&stamp((self.clock)(), plain))
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        fresh(
            self.inner.decrypt(ticket)?,
            (self.clock)(),
            u64::from(self.timeout),
        )
    }
}

impl fmt::Debug for ExpiringTickets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpiringTickets")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A session cache whose entries resume for `timeout` seconds after they were stored.
pub(crate) struct ExpiringStore {
    inner: Arc<dyn StoresServerSessions>,
    timeout: u64,
    clock: Clock,
}

impl ExpiringStore {
    pub(crate) fn new(inner: Arc<dyn StoresServerSessions>, timeout: u32, clock: Clock) -> Self {
        ExpiringStore {
            inner,
            timeout: u64::from(timeout),
            clock,
        }
    }
}

impl StoresServerSessions for ExpiringStore {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, stamp((self.clock)(), &value))
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        fresh(self.inner.get(key)?, (self.clock)(), self.timeout)
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        fresh(self.inner.take(key)?, (self.clock)(), self.timeout)
    }

    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

impl fmt::Debug for ExpiringStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpiringStore")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::tickets::SharedTicketer;

    static NOW: AtomicU64 = AtomicU64::new(1_000_000);

    fn fake() -> u64 {
        NOW.load(Ordering::SeqCst)
    }

    fn tickets(timeout: u32) -> ExpiringTickets {
        let keys: Vec<u8> = (0..48).collect();
        ExpiringTickets::new(Arc::new(SharedTicketer::new(&keys).unwrap()), timeout, fake)
    }

    // One test moves the shared fake clock: the checks run in order.
    #[test]
    fn tickets_and_cache_entries_resume_until_the_timeout_and_not_after() {
        NOW.store(1_000_000, Ordering::SeqCst);
        let t = tickets(300);
        assert_eq!(t.lifetime(), 300, "the hint clients get is the timeout");
        let ticket = t.encrypt(b"session").unwrap();
        assert_eq!(t.decrypt(&ticket).as_deref(), Some(&b"session"[..]));

        let store =
            ExpiringStore::new(rustls::server::ServerSessionMemoryCache::new(16), 300, fake);
        assert!(store.put(b"id".to_vec(), b"cached".to_vec()));
        assert_eq!(store.get(b"id").as_deref(), Some(&b"cached"[..]));

        NOW.store(1_000_300, Ordering::SeqCst);
        assert!(
            t.decrypt(&ticket).is_some(),
            "still fresh at exactly the timeout"
        );
        assert!(store.get(b"id").is_some());

        NOW.store(1_000_301, Ordering::SeqCst);
        assert_eq!(t.decrypt(&ticket), None, "expired one second later");
        assert_eq!(store.get(b"id"), None);
        assert_eq!(store.take(b"id"), None);

        // A ticket stamped far ahead of this clock (a server whose clock is wrong) is refused;
        // a little ahead (skew) is accepted.
        NOW.store(2_000_000, Ordering::SeqCst);
        let ahead = t.encrypt(b"later").unwrap();
        NOW.store(2_000_000 - SKEW_SECS, Ordering::SeqCst);
        assert!(t.decrypt(&ahead).is_some());
        NOW.store(2_000_000 - SKEW_SECS - 1, Ordering::SeqCst);
        assert_eq!(t.decrypt(&ahead), None);
    }

    #[test]
    fn a_stamp_that_is_cut_short_does_not_open() {
        assert_eq!(fresh(vec![0; 7], 10, 300), None);
        assert_eq!(fresh(Vec::new(), 10, 300), None);
        assert_eq!(fresh(stamp(10, b""), 10, 300), Some(Vec::new()));
    }
}
