//! Session tickets sealed under keys the application gives (node:tls's `ticketKeys`), so that
//! several servers (processes, machines behind one load balancer) resume each other's
//! sessions. Without them a context seals under random keys of its own, rotated by rustls's
//! `TicketRotator` (crate::expiry), which only that context's handlers share.
//!
//! Ground rules:
//! - The 48 bytes are node:tls's size. The first 16 name the keys (a ticket under another name
//!   is not opened: a full handshake follows, never an error); an AES-256-GCM key is derived
//!   from all 48 with HKDF-SHA256. Tickets are `name ‖ nonce ‖ sealed session`, the name also
//!   authenticated. Only netloop servers given the same bytes open each other's tickets
//!   (node:tls servers use OpenSSL's format).
//! - The keys do not roll by themselves: rotating them (a `reload` with new bytes, on every
//!   server at about the same time) is what bounds how long a stolen key opens recorded
//!   sessions, as with node:tls.
//! - Decryption takes attacker-controlled bytes: lengths are checked before any slicing, and
//!   a ticket that does not open is `None`.

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};
use rustls::crypto::GetRandomFailed;
use rustls::server::ProducesTickets;

use crate::error::TlsError;

/// node:tls's `ticketKeys` size.
pub const TICKET_KEYS_LEN: usize = 48;
const NAME_LEN: usize = 16;
const TAG_LEN: usize = 16;
/// The lifetime hint of a bare ticketer (seconds); a context wraps it in
/// crate::expiry::ExpiringTickets, whose hint is its `sessionTimeout`.
const LIFETIME_SECS: u32 = 2 * 60 * 60;

/// A ticketer under fresh random keys: what a context without `ticketKeys` rotates through.
pub(crate) fn random_ticketer() -> Result<Box<dyn ProducesTickets>, GetRandomFailed> {
    let mut keys = [0u8; TICKET_KEYS_LEN];
    SystemRandom::new()
        .fill(&mut keys)
        .map_err(|_| GetRandomFailed)?;
    let t = SharedTicketer::new(&keys).map_err(|_| GetRandomFailed)?;
    Ok(Box::new(t))
}

/// Seals and opens tickets under the application's keys.
pub(crate) struct SharedTicketer {
    name: [u8; NAME_LEN],
    key: LessSafeKey,
    rng: SystemRandom,
}

impl SharedTicketer {
    pub(crate) fn new(keys: &[u8]) -> Result<SharedTicketer, TlsError> {
        if keys.len() != TICKET_KEYS_LEN {
            return Err(TlsError::Config(format!(
                "ticketKeys must be {TICKET_KEYS_LEN} bytes, not {}",
                keys.len()
            )));
        }
        let mut name = [0u8; NAME_LEN];
        name.copy_from_slice(&keys[..NAME_LEN]);
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, b"netloop session ticket keys").extract(keys);
        let okm = prk
            .expand(&[b"aes-256-gcm"], &AES_256_GCM)
            .map_err(|_| TlsError::Config("ticketKeys: key derivation failed".into()))?;
        Ok(SharedTicketer {
            name,
            key: LessSafeKey::new(UnboundKey::from(okm)),
            rng: SystemRandom::new(),
        })
    }
}

impl ProducesTickets for SharedTicketer {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        LIFETIME_SECS
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).ok()?;
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&self.name),
                &mut sealed,
            )
            .ok()?;
        let mut ticket = Vec::with_capacity(NAME_LEN + NONCE_LEN + sealed.len());
        ticket.extend_from_slice(&self.name);
        ticket.extend_from_slice(&nonce);
        ticket.extend_from_slice(&sealed);
        Some(ticket)
    }

    fn decrypt(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        if ticket.len() < NAME_LEN + NONCE_LEN + TAG_LEN || ticket[..NAME_LEN] != self.name {
            return None;
        }
        let nonce =
            Nonce::try_assume_unique_for_key(&ticket[NAME_LEN..NAME_LEN + NONCE_LEN]).ok()?;
        let mut sealed = ticket[NAME_LEN + NONCE_LEN..].to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(&self.name), &mut sealed)
            .ok()?;
        let len = plain.len();
        sealed.truncate(len);
        Some(sealed)
    }
}

impl std::fmt::Debug for SharedTicketer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTicketer").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(seed: u8) -> Vec<u8> {
        (0..48u8)
            .map(|i| i.wrapping_mul(7).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn a_ticket_opens_under_the_same_keys_only() {
        let a = SharedTicketer::new(&keys(1)).unwrap();
        let a2 = SharedTicketer::new(&keys(1)).unwrap();
        let b = SharedTicketer::new(&keys(2)).unwrap();
        let t = a.encrypt(b"session state").unwrap();
        assert_eq!(a2.decrypt(&t).as_deref(), Some(&b"session state"[..]));
        assert_eq!(b.decrypt(&t), None);
        assert_ne!(
            a.encrypt(b"session state").unwrap(),
            t,
            "a fresh nonce each time"
        );
    }

    #[test]
    fn a_changed_or_short_ticket_does_not_open() {
        let a = SharedTicketer::new(&keys(1)).unwrap();
        let t = a.encrypt(b"session state").unwrap();
        for i in 0..t.len() {
            let mut bad = t.clone();
            bad[i] ^= 1;
            assert_eq!(a.decrypt(&bad), None, "byte {i} changed");
        }
        for n in 0..t.len() {
            assert_eq!(a.decrypt(&t[..n]), None);
        }
    }

    #[test]
    fn keys_of_another_size_are_refused() {
        for n in [0, 47, 49, 80] {
            let e = SharedTicketer::new(&vec![0; n]).unwrap_err();
            assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
        }
    }
}
