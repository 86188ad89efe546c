//! One direction's record protection after a TLS 1.3 handshake (RFC 8446 §5.2-5.3): the AEAD
//! key, the static IV and the sequence number. The nonce of each record is the IV XOR the
//! sequence number (left-padded to the IV's 12 bytes); the sequence number starts at 0 with
//! every key (handshake hand-over: wherever rustls left it) and is never reused: at its last
//! value the direction refuses to go on instead of wrapping.

use ring::aead::{self, Aad, LessSafeKey, Nonce, Tag, UnboundKey};
use rustls::ConnectionTrafficSecrets;

use crate::error::TlsError;

/// The AEAD tag's length (all three TLS 1.3 AEADs rustls offers).
pub(crate) const TAG_LEN: usize = 16;

pub(crate) struct Keys {
    key: LessSafeKey,
    iv: [u8; aead::NONCE_LEN],
    seq: u64,
    /// Debug builds: what names this key among the keys sealed with (`sealed_once`).
    #[cfg(debug_assertions)]
    id: [u8; 32],
}

/// Debug builds (tests): every (key, nonce) pair sealed on this thread, so that sealing one
/// twice — a sequence number handed over wrongly, a key that did not move on — fails loudly.
/// Records are sealed on the channel's loop thread, so a thread's set sees every key of its
/// connections; a key is named by a digest of its bytes and IV (two keys never collide).
#[cfg(debug_assertions)]
fn sealed_once(id: &[u8; 32], nonce: &[u8; aead::NONCE_LEN]) {
    use std::cell::RefCell;
    use std::collections::HashSet;
    thread_local! {
        static SEALED: RefCell<HashSet<([u8; 32], [u8; aead::NONCE_LEN])>> =
            RefCell::new(HashSet::new());
    }
    let fresh = SEALED.with(|s| s.borrow_mut().insert((*id, *nonce)));
    debug_assert!(fresh, "a (key, nonce) pair sealed twice");
}

impl Keys {
    /// Keys from rustls's traffic secrets, starting at `seq`.
    pub(crate) fn new(seq: u64, secrets: &ConnectionTrafficSecrets) -> Result<Keys, TlsError> {
        let (alg, key, iv): (&'static aead::Algorithm, &[u8], &[u8]) = match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
                (&aead::AES_128_GCM, key.as_ref(), iv.as_ref())
            }
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => {
                (&aead::AES_256_GCM, key.as_ref(), iv.as_ref())
            }
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&aead::CHACHA20_POLY1305, key.as_ref(), iv.as_ref())
            }
            _ => return Err(TlsError::Other("unsupported record protection".into())),
        };
        #[cfg(debug_assertions)]
        let id = {
            let mut d = ring::digest::Context::new(&ring::digest::SHA256);
            d.update(key);
            d.update(iv);
            let mut id = [0u8; 32];
            id.copy_from_slice(d.finish().as_ref());
            id
        };
        let key = UnboundKey::new(alg, key)
            .map_err(|_| TlsError::Other("bad traffic key length".into()))?;
        let iv: [u8; aead::NONCE_LEN] = iv
            .try_into()
            .map_err(|_| TlsError::Other("bad traffic iv length".into()))?;
        Ok(Keys {
            key: LessSafeKey::new(key),
            iv,
            seq,
            #[cfg(debug_assertions)]
            id,
        })
    }

    /// The next record's nonce; the sequence number moves on. Fails (instead of wrapping) when
    /// the sequence number is spent.
    fn next_nonce(&mut self) -> Result<Nonce, TlsError> {
        self.next_nonce_bytes().map(Nonce::assume_unique_for_key)
    }

    fn next_nonce_bytes(&mut self) -> Result<[u8; aead::NONCE_LEN], TlsError> {
        if self.seq == u64::MAX {
            return Err(TlsError::Protocol(
                "record sequence number exhausted".into(),
            ));
        }
        let mut nonce = self.iv;
        for (n, s) in nonce[aead::NONCE_LEN - 8..]
            .iter_mut()
            .zip(self.seq.to_be_bytes())
        {
            *n ^= s;
        }
        self.seq += 1;
        Ok(nonce)
    }

    /// Records protected with this key so far (the next sequence number).
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Encrypts `body` (content and inner type) in place; returns the tag to append.
    /// `header` is the record's header, the additional data.
    pub(crate) fn seal(&mut self, header: &[u8; 5], body: &mut [u8]) -> Result<Tag, TlsError> {
        let nonce = self.next_nonce_bytes()?;
        #[cfg(debug_assertions)]
        sealed_once(&self.id, &nonce);
        let nonce = Nonce::assume_unique_for_key(nonce);
        self.key
            .seal_in_place_separate_tag(nonce, Aad::from(header), body)
            .map_err(|_| TlsError::Other("record encryption failed".into()))
    }

    /// Decrypts the ciphertext and tag at `in_out[from..]`, writing the plaintext to the
    /// front of `in_out` (the returned prefix). `None` when the tag does not verify.
    pub(crate) fn open<'a>(
        &mut self,
        header: &[u8; 5],
        in_out: &'a mut [u8],
        from: usize,
    ) -> Result<Option<&'a mut [u8]>, TlsError> {
        let nonce = self.next_nonce()?;
        Ok(self
            .key
            .open_within(nonce, Aad::from(header), in_out, from..)
            .ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(byte: u8) -> ConnectionTrafficSecrets {
        ConnectionTrafficSecrets::Aes256Gcm {
            key: [byte; 32].into(),
            iv: [byte; 12].into(),
        }
    }

    #[test]
    fn keys_seal_each_nonce_once_and_move_on() {
        let mut k = Keys::new(7, &secrets(1)).expect("keys");
        let mut body = *b"record";
        let _tag = k.seal(&[23, 3, 3, 0, 22], &mut body).expect("sealed");
        let _tag = k
            .seal(&[23, 3, 3, 0, 22], &mut body)
            .expect("sealed again, next nonce");
        assert_eq!(k.seq(), 9);
    }

    /// The debug assertion: the same key at a sequence number already sealed (a hand-over
    /// that gave a used sequence number) stops the test run.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "sealed twice")]
    fn sealing_a_key_and_nonce_pair_twice_fails_a_debug_assertion() {
        let mut body = *b"record";
        let mut first = Keys::new(3, &secrets(2)).expect("keys");
        let _tag = first.seal(&[23, 3, 3, 0, 22], &mut body).expect("sealed");
        let mut again = Keys::new(3, &secrets(2)).expect("keys");
        let _ = again.seal(&[23, 3, 3, 0, 22], &mut body);
    }
}
