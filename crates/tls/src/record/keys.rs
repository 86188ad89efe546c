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
        let key = UnboundKey::new(alg, key)
            .map_err(|_| TlsError::Other("bad traffic key length".into()))?;
        let iv: [u8; aead::NONCE_LEN] = iv
            .try_into()
            .map_err(|_| TlsError::Other("bad traffic iv length".into()))?;
        Ok(Keys {
            key: LessSafeKey::new(key),
            iv,
            seq,
        })
    }

    /// The next record's nonce; the sequence number moves on. Fails (instead of wrapping) when
    /// the sequence number is spent.
    fn next_nonce(&mut self) -> Result<Nonce, TlsError> {
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
        Ok(Nonce::assume_unique_for_key(nonce))
    }

    /// Records protected with this key so far (the next sequence number).
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Encrypts `body` (content and inner type) in place; returns the tag to append.
    /// `header` is the record's header, the additional data.
    pub(crate) fn seal(&mut self, header: &[u8; 5], body: &mut [u8]) -> Result<Tag, TlsError> {
        let nonce = self.next_nonce()?;
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
