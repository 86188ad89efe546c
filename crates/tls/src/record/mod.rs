//! netloop's own TLS 1.3 record layer, used by a server once rustls completed the handshake
//! (docs/decisions/0007-tls.md). rustls hands over the traffic secrets and sequence numbers and
//! keeps what needs its key schedule (`KernelConnection`: the next secrets on a KeyUpdate);
//! records are opened in place in the receive buffer and sealed straight into the buffer that
//! goes to the socket, with ring's AEADs (the provider rustls uses here).
//!
//! Ground rules (RFC 8446 §5, §6, §4.6.3):
//! - Records in: outer type application_data only (anything else, e.g. a late
//!   change_cipher_spec or a plaintext alert: unexpected_message); ciphertext over 2^14+256:
//!   record_overflow; a tag that does not verify: bad_record_mac; inner plaintext over 2^14:
//!   record_overflow (content, type and padding together); zero padding stripped, an all-zero inner plaintext: unexpected_message.
//! - Inner alerts: close_notify ends reading (the handler answers with its own and closes);
//!   any other alert is the peer's error, named. Inner handshake messages: KeyUpdate only (a
//!   server receives no other), aligned to the record's end; it moves the receive key on and,
//!   when asked, our own KeyUpdate goes out before any further data.
//! - Every protocol failure queues our fatal alert (sent by the handler before it closes this
//!   channel) and makes the layer refuse further records both ways.
//! - Sending: at most 2^14 bytes per record, no padding; before the send sequence number
//!   reaches the suite's confidentiality limit our own KeyUpdate moves the send key on.
//! - One layer per connection, on its channel's loop thread only.

mod keys;
mod seal;

use bytes::{Buf, Bytes, BytesMut};
use rustls::kernel::KernelConnection;
use rustls::server::ServerConnectionData;
use rustls::{AlertDescription, ExtractedSecrets};

use crate::error::{alert_name, TlsError};
use keys::Keys;

/// Record header: type, legacy version, length.
pub(crate) const HEADER: usize = 5;
/// The largest TLSInnerPlaintext content (RFC 8446 §5.1).
const MAX_PLAIN: usize = 1 << 14;
/// The largest TLSCiphertext length (RFC 8446 §5.2).
pub(crate) const MAX_CIPHER: usize = MAX_PLAIN + 256;
/// A post-handshake message may span records; none a server accepts is longer than this.
const MAX_HANDSHAKE_MESSAGE: usize = 64;

const CONTENT_ALERT: u8 = 21;
const CONTENT_HANDSHAKE: u8 = 22;
const CONTENT_APPLICATION_DATA: u8 = 23;
const HANDSHAKE_KEY_UPDATE: u8 = 24;

/// What one read yielded.
pub(crate) struct Opened {
    pub(crate) plain: Bytes,
    pub(crate) peer_closed: bool,
}

pub(crate) struct RecordLayer {
    tx: Keys,
    rx: Keys,
    kernel: KernelConnection<ServerConnectionData>,
    /// Send sequence number at which the send key is moved on.
    tx_limit: u64,
    /// The start of a record that the next read completes.
    partial: BytesMut,
    /// A post-handshake message split across records.
    handshake: Vec<u8>,
    /// Records of our own (alerts, KeyUpdates) not yet taken by the handler.
    control: Vec<u8>,
    /// We sent close_notify or a fatal alert: nothing more is sent.
    send_closed: bool,
    /// The peer sent close_notify or we failed: nothing more is read.
    recv_closed: bool,
}

impl RecordLayer {
    pub(crate) fn new(
        secrets: ExtractedSecrets,
        kernel: KernelConnection<ServerConnectionData>,
    ) -> Result<RecordLayer, TlsError> {
        let (tx_seq, tx) = secrets.tx;
        let (rx_seq, rx) = secrets.rx;
        // rustls's limit for the suite (AES-GCM: 2^24.5 records, RFC 8446 §5.5), kept well
        // inside; ChaCha20-Poly1305 has none below the sequence space.
        let tx_limit = kernel
            .negotiated_cipher_suite()
            .tls13()
            .map_or(u64::MAX - 1, |s| s.common.confidentiality_limit)
            .min(u64::MAX - 1);
        Ok(RecordLayer {
            tx: Keys::new(tx_seq, &tx)?,
            rx: Keys::new(rx_seq, &rx)?,
            kernel,
            tx_limit,
            partial: BytesMut::new(),
            handshake: Vec::new(),
            control: Vec::new(),
            send_closed: false,
            recv_closed: false,
        })
    }

    /// Opens the records in `data` (and any record begun in an earlier read) in place: each
    /// record's plaintext is decrypted to just behind the plaintext of the one before (the
    /// first where it lies), so the read's plaintext ends up contiguous without a copy of its
    /// own. A small read (`crate::small`) is opened in the thread's scratch buffer instead and
    /// its plaintext carved from the transport's chunk: no allocation per message.
    pub(crate) fn open(&mut self, data: Bytes) -> Result<Opened, TlsError> {
        if self.partial.len() + data.len() <= crate::small::SMALL_READ {
            return crate::small::with_scratch(|scratch| {
                scratch.extend_from_slice(&self.partial);
                scratch.extend_from_slice(&data);
                self.partial = BytesMut::new();
                let (read, written, peer_closed) = self.open_in(&mut scratch[..])?;
                if !self.recv_closed && read < scratch.len() {
                    self.partial = BytesMut::from(&scratch[read..]);
                }
                let plain = scratch.get(HEADER..HEADER + written).unwrap_or_default();
                Ok(Opened {
                    plain: crate::small::carve(plain),
                    peer_closed,
                })
            });
        }
        let mut buf = if self.partial.is_empty() {
            // In place when the read's buffer is ours alone, else one copy.
            data.try_into_mut()
                .unwrap_or_else(|shared| BytesMut::from(&shared[..]))
        } else {
            // One allocation of exactly the bytes at hand: growing the split-off start of a
            // record would allocate at least the size of the buffer it came from.
            let partial = std::mem::take(&mut self.partial);
            let mut b = BytesMut::with_capacity(partial.len() + data.len());
            b.extend_from_slice(&partial);
            b.extend_from_slice(&data);
            b
        };
        let (read, written, peer_closed) = self.open_in(&mut buf)?;
        if !self.recv_closed && read < buf.len() {
            // The start of a record the next read completes (whatever follows close_notify is
            // ignored, RFC 8446 §6.1).
            self.partial = buf.split_off(read);
        }
        buf.truncate(HEADER + written);
        if buf.len() >= HEADER {
            buf.advance(HEADER);
        } else {
            buf.clear();
        }
        Ok(Opened {
            plain: buf.freeze(),
            peer_closed,
        })
    }

    /// Opens the whole records at the front of `buf` in place. Returns the bytes of records
    /// consumed, the plaintext bytes now at `buf[HEADER..]`, and whether the peer closed.
    fn open_in(&mut self, buf: &mut [u8]) -> Result<(usize, usize, bool), TlsError> {
        let (mut read, mut written) = (0usize, 0usize);
        let mut peer_closed = false;
        while !self.recv_closed && buf.len() - read >= HEADER {
            let h = &buf[read..read + HEADER];
            let (outer, len) = (h[0], usize::from(u16::from_be_bytes([h[3], h[4]])));
            if outer != CONTENT_APPLICATION_DATA {
                return Err(self.fatal(
                    AlertDescription::UnexpectedMessage,
                    format!("a record of type {} after the handshake", outer),
                ));
            }
            if len > MAX_CIPHER {
                return Err(self.fatal(
                    AlertDescription::RecordOverflow,
                    format!("a record of {} bytes (limit 16640)", len),
                ));
            }
            if buf.len() - read - HEADER < len {
                break;
            }
            let header = [h[0], h[1], h[2], h[3], h[4]];
            // Decrypted to `to`, right behind the plaintext so far (HEADER: the first
            // record's plaintext stays where it is).
            let to = HEADER + written;
            let from = read + HEADER;
            let opened = self.rx.open(&header, &mut buf[to..from + len], from - to);
            let plain = match opened {
                Ok(Some(p)) => p,
                Ok(None) => {
                    return Err(self.fatal(
                        AlertDescription::BadRecordMac,
                        "a record that does not decrypt".into(),
                    ))
                }
                Err(e) => return Err(self.fail(AlertDescription::InternalError, e)),
            };
            // TLSInnerPlaintext: content, the content type, zero padding.
            let Some(end) = plain.iter().rposition(|&b| b != 0) else {
                return Err(self.fatal(
                    AlertDescription::UnexpectedMessage,
                    "a record without a content type".into(),
                ));
            };
            let inner = plain[end];
            // The whole TLSInnerPlaintext (content, type, padding) is at most 2^14 + 1 bytes.
            if plain.len() > MAX_PLAIN + 1 {
                let n = plain.len();
                return Err(self.fatal(
                    AlertDescription::RecordOverflow,
                    format!("a record with {n} bytes of inner plaintext (limit 16385)"),
                ));
            }
            if inner != CONTENT_HANDSHAKE && !self.handshake.is_empty() {
                return Err(self.fatal(
                    AlertDescription::UnexpectedMessage,
                    format!("a handshake message interleaved with type {}", inner),
                ));
            }
            let start = to;
            match inner {
                CONTENT_APPLICATION_DATA => written += end,
                CONTENT_ALERT => {
                    let alert = buf[start..start + end].to_vec();
                    peer_closed |= self.on_alert(&alert)?;
                }
                CONTENT_HANDSHAKE if end > 0 => {
                    let message = buf[start..start + end].to_vec();
                    self.on_handshake(&message)?;
                }
                _ => {
                    return Err(self.fatal(
                        AlertDescription::UnexpectedMessage,
                        format!("an inner record of type {}", inner),
                    ))
                }
            }
            read += HEADER + len;
        }
        Ok((read, written, peer_closed))
    }

    /// An alert from the peer: true for close_notify, an error naming any other.
    fn on_alert(&mut self, alert: &[u8]) -> Result<bool, TlsError> {
        let [_level, description] = alert else {
            return Err(self.fatal(
                AlertDescription::DecodeError,
                format!("an alert of {} bytes", alert.len()),
            ));
        };
        let description = AlertDescription::from(*description);
        self.recv_closed = true;
        if description == AlertDescription::CloseNotify {
            return Ok(true);
        }
        // Every other alert ends the connection in TLS 1.3 (user_canceled comes before a
        // close_notify that will not be read now): the peer's error, not ours to answer.
        self.send_closed = true;
        Err(TlsError::AlertReceived(alert_name(description)))
    }

    /// Post-handshake messages: a server accepts KeyUpdate only (RFC 8446 §4.6.3), which must
    /// end its record.
    fn on_handshake(&mut self, content: &[u8]) -> Result<(), TlsError> {
        self.handshake.extend_from_slice(content);
        if self.handshake.len() >= 4 {
            let m = &self.handshake;
            let (kind, len) = (m[0], u32::from_be_bytes([0, m[1], m[2], m[3]]) as usize);
            if kind != HANDSHAKE_KEY_UPDATE {
                return Err(self.fatal(
                    AlertDescription::UnexpectedMessage,
                    format!("post-handshake message {}", kind),
                ));
            }
            if len != 1 {
                return Err(self.fatal(
                    AlertDescription::DecodeError,
                    format!("a KeyUpdate of {} bytes", len),
                ));
            }
            if m.len() < 5 {
                return Ok(());
            }
            if m.len() > 5 {
                return Err(self.fatal(
                    AlertDescription::UnexpectedMessage,
                    "a KeyUpdate not at the end of its record".into(),
                ));
            }
            let request = m[4];
            self.handshake.clear();
            return self.on_key_update(request);
        }
        if self.handshake.len() > MAX_HANDSHAKE_MESSAGE {
            return Err(self.fatal(
                AlertDescription::UnexpectedMessage,
                "an oversized post-handshake message".into(),
            ));
        }
        Ok(())
    }

    fn on_key_update(&mut self, request: u8) -> Result<(), TlsError> {
        if request > 1 {
            return Err(self.fatal(
                AlertDescription::IllegalParameter,
                format!("KeyUpdate request {}", request),
            ));
        }
        let next = self.kernel.update_rx_secret();
        let next = next.map_err(|e| TlsError::from_rustls(&e));
        match next.and_then(|(seq, s)| Keys::new(seq, &s)) {
            Ok(keys) => self.rx = keys,
            Err(e) => return Err(self.fail(AlertDescription::InternalError, e)),
        }
        if request == 1 && !self.send_closed {
            // update_requested: ours goes out before anything else we send.
            self.send_key_update()?;
        }
        Ok(())
    }

    /// A protocol failure: our fatal alert is queued, the layer stops, the error names it.
    fn fatal(&mut self, alert: AlertDescription, what: String) -> TlsError {
        let e = TlsError::Protocol(format!("{}: {what}", alert_name(alert)));
        self.fail(alert, e)
    }

    fn fail(&mut self, alert: AlertDescription, error: TlsError) -> TlsError {
        self.recv_closed = true;
        self.partial = BytesMut::new();
        if !self.send_closed {
            self.push_alert(2, alert);
            self.send_closed = true;
        }
        error
    }

    /// The peer's close_notify came before the hand-over: nothing more is read.
    pub(crate) fn peer_closed(&mut self) {
        self.recv_closed = true;
    }

    /// Our close_notify (once; nothing is sent after it).
    pub(crate) fn close_notify(&mut self) {
        if !self.send_closed {
            self.push_alert(1, AlertDescription::CloseNotify);
            self.send_closed = true;
        }
    }

    /// Records of our own waiting to be sent.
    pub(crate) fn take_control(&mut self) -> Option<Bytes> {
        (!self.control.is_empty()).then(|| Bytes::from(std::mem::take(&mut self.control)))
    }
}
