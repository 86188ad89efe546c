//! Sealing: plaintext straight into the buffer of records that goes to the socket, each record
//! encrypted in place there (no record `Vec` of its own); our alerts and KeyUpdates.

use bytes::Bytes;
use rustls::AlertDescription;

use super::keys::TAG_LEN;
use super::{
    Keys, RecordLayer, CONTENT_ALERT, CONTENT_APPLICATION_DATA, CONTENT_HANDSHAKE,
    HANDSHAKE_KEY_UPDATE, HEADER, MAX_PLAIN,
};
use crate::error::TlsError;

/// Bytes a record adds to its content: header, inner content type, tag.
const OVERHEAD: usize = HEADER + 1 + TAG_LEN;

impl RecordLayer {
    /// Encrypts `parts` (in order, one stream: records are filled across the parts' edges)
    /// into one buffer of records, after any records of our own still waiting.
    pub(crate) fn seal(&mut self, parts: &[&[u8]]) -> Result<Bytes, TlsError> {
        if self.send_closed {
            return Err(TlsError::Closed);
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let records = total.div_ceil(MAX_PLAIN);
        let mut out = std::mem::take(&mut self.control);
        out.reserve(total + records * OVERHEAD);
        let (mut part, mut offset) = (0usize, 0usize);
        let mut left = total;
        while left > 0 {
            let n = left.min(MAX_PLAIN);
            let start = out.len();
            out.extend_from_slice(&[CONTENT_APPLICATION_DATA, 3, 3, 0, 0]);
            let mut need = n;
            while need > 0 {
                let p = parts[part];
                let take = need.min(p.len() - offset);
                out.extend_from_slice(&p[offset..offset + take]);
                offset += take;
                need -= take;
                if offset == p.len() {
                    part += 1;
                    offset = 0;
                }
            }
            out.push(CONTENT_APPLICATION_DATA);
            self.protect(&mut out, start)?;
            left -= n;
        }
        Ok(Bytes::from(out))
    }

    /// Encrypts the record begun at `start` of `out` (header written, content and inner type
    /// after it) in place: fills in the length, appends the tag. Moves the send key on first
    /// when it reached its limit (our KeyUpdate goes before this record).
    fn protect(&mut self, out: &mut Vec<u8>, start: usize) -> Result<(), TlsError> {
        if self.tx.seq() >= self.tx_limit {
            let record = out.split_off(start);
            self.push_key_update(out, 0)?;
            let start = out.len();
            out.extend_from_slice(&record);
            return self.seal_at(out, start);
        }
        self.seal_at(out, start)
    }

    fn seal_at(&mut self, out: &mut Vec<u8>, start: usize) -> Result<(), TlsError> {
        let len = out.len() - start - HEADER + TAG_LEN;
        let len = u16::try_from(len).map_err(|_| TlsError::Other("record too long".into()))?;
        out[start + 3..start + HEADER].copy_from_slice(&len.to_be_bytes());
        let (head, body) = out[start..].split_at_mut(HEADER);
        let header: [u8; HEADER] = [head[0], head[1], head[2], head[3], head[4]];
        let tag = self.tx.seal(&header, body)?;
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }

    /// Appends a record of inner type `content` holding `body`, sealed.
    fn push_record(&mut self, out: &mut Vec<u8>, content: u8, body: &[u8]) -> Result<(), TlsError> {
        let start = out.len();
        out.extend_from_slice(&[CONTENT_APPLICATION_DATA, 3, 3, 0, 0]);
        out.extend_from_slice(body);
        out.push(content);
        self.seal_at(out, start)
    }

    /// Our KeyUpdate (RFC 8446 §4.6.3), sealed with the current send key, then the next key.
    fn push_key_update(&mut self, out: &mut Vec<u8>, request: u8) -> Result<(), TlsError> {
        self.push_record(
            out,
            CONTENT_HANDSHAKE,
            &[HANDSHAKE_KEY_UPDATE, 0, 0, 1, request],
        )?;
        let (seq, secrets) = self
            .kernel
            .update_tx_secret()
            .map_err(|e| TlsError::from_rustls(&e))?;
        self.tx = Keys::new(seq, &secrets)?;
        Ok(())
    }

    /// Queues our KeyUpdate (update_not_requested), answering the peer's update_requested.
    pub(super) fn send_key_update(&mut self) -> Result<(), TlsError> {
        self.queue_key_update(0)
    }

    /// Queues our KeyUpdate with update_requested: the peer answers with its own.
    pub(crate) fn request_key_update(&mut self) -> Result<(), TlsError> {
        if self.send_closed {
            return Err(TlsError::Closed);
        }
        self.queue_key_update(1)
    }

    fn queue_key_update(&mut self, request: u8) -> Result<(), TlsError> {
        let mut control = std::mem::take(&mut self.control);
        let result = self.push_key_update(&mut control, request);
        self.control = control;
        result
    }

    /// Queues an alert (`level` 1: warning, 2: fatal), sealed. Best effort: a send key that
    /// is spent sends nothing.
    pub(super) fn push_alert(&mut self, level: u8, alert: AlertDescription) {
        let mut control = std::mem::take(&mut self.control);
        let _ = self.push_record(&mut control, CONTENT_ALERT, &[level, u8::from(alert)]);
        self.control = control;
    }
}
